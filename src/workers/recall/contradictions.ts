// Contradiction check over the semantic memories a recall returns. Deterministic and
// offline: each fact is reduced to (owner, attribute, value, polarity); two facts conflict when
//   - a single-valued attribute (where someone lives, works, is from, their age, "my X is")
//     has different values ("lives in Berlin" / "lives in Madrid"), or
//   - the same statement appears once affirmed and once negated ("likes tea" / "does not like tea"), or
//   - the statements are identical except for numbers or dates ("has 2 cats" / "has 3 cats").
// Facts whose validity intervals do not overlap (one superseded the other) are not in conflict.
// Multi-valued attributes (likes, has, is allergic to) never conflict by value alone, so
// "likes tea" and "likes coffee" raise nothing.
import type { ContradictionRecord } from '../../shared/schemas.js';
import type { MemoryRow } from '../port/rows.js';
import { affirmative, attributeOfAffirmed, normaliseFact } from '../../shared/fact-attributes.js';

interface Claim {
  row: MemoryRow;
  attribute: string | null;
  value: string;
  negated: boolean;
  /** The statement with numbers masked, for the changed-number rule. */
  shape: string;
  numbers: string[];
  /** The statement with negation removed. */
  affirmed: string;
  /** …and singularised, for the polarity rule. */
  plain: string;
}

/** Numbers only conflict in statements of state (quantities, times, ages), not of events. */
const STATE_VERB = /\b(?:is|are|was|has|have|owns|costs|earns|weighs|measures|needs|takes|lasts|starts|ends|scheduled|due|born|old)\b/;
/** "museum number 7", "room 12", "#3": identifiers, not quantities. */
const IDENTIFIER_NUMBER = /\b(?:number|no\.?|room|floor|version|chapter|page|step|item|#)\s*\d/;

const NUMBER = /\b\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm)?\b/g;

/** Words crudely singularised, so "likes" and "(does not) like" compare equal. */
function singularised(text: string): string {
  return text.split(' ').map((w) => (w.length > 3 && /[^s]s$/.test(w) ? w.slice(0, -1) : w)).join(' ');
}

function claimOf(row: MemoryRow): Claim {
  const text = normaliseFact(row.content);
  const { affirmed, negated } = affirmative(text);
  const plain = singularised(affirmed);
  const set = attributeOfAffirmed(affirmed);
  const attribute = set?.attribute ?? null;
  const value = set?.value ?? '';
  return { row, attribute, value, negated, affirmed, plain, shape: text.replace(NUMBER, '#'), numbers: text.match(NUMBER) ?? [] };
}

function conflict(a: Claim, b: Claim): string | null {
  if (a.negated !== b.negated && a.plain === b.plain) return 'one negates the other';
  if (a.attribute !== null && a.attribute === b.attribute && !a.negated && !b.negated && a.value !== b.value) {
    return `different values for "${a.attribute.replace(/^'s /, '')}"`;
  }
  if (a.numbers.length > 0 && a.shape === b.shape && a.numbers.join() !== b.numbers.join() && quantitative(a.affirmed)) {
    return 'the numbers differ';
  }
  return null;
}

function quantitative(statement: string): boolean {
  return STATE_VERB.test(statement) && !IDENTIFIER_NUMBER.test(statement);
}

/**
 * At most this many conflicting pairs are reported per recall: the pairs among n facts grow as
 * n², and 1000 facts "X lives in Yᵢ" would otherwise give 499,500 descriptions. Pairs come in
 * recall rank order, so the ones kept involve the best-ranked memories.
 */
export const MAX_CONTRADICTIONS = 50;
/** A memory longer than this many characters is quoted as its start and an ellipsis. */
export const MAX_QUOTED_CHARS = 200;

function quote(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return `"${text}"`;
  let cut = '';
  let count = 0;
  for (const char of text) {
    if (count++ === MAX_QUOTED_CHARS) return `"${cut}…"`;
    cut += char;
  }
  return `"${cut}"`; // long in UTF-16 units, but not in characters
}

/** Whether the two memories' validity intervals [occurred_at, valid_until) share a moment. */
function overlapInTime(a: MemoryRow, b: MemoryRow): boolean {
  const endA = a.valid_until ?? Infinity;
  const endB = b.valid_until ?? Infinity;
  return a.occurred_at < endB && b.occurred_at < endA;
}

export function findContradictions(memories: MemoryRow[]): ContradictionRecord[] {
  const claims = memories.filter((m) => m.memory_type === 'semantic').map(claimOf);
  const found: ContradictionRecord[] = [];
  for (let i = 0; i < claims.length; i++) {
    for (let j = i + 1; j < claims.length; j++) {
      const [a, b] = [claims[i], claims[j]];
      // Facts about different entities cannot contradict each other.
      if (a.row.entity_id === null || a.row.entity_id !== b.row.entity_id) continue;
      // Nor can facts that never held at the same time (one superseded before the other began).
      if (!overlapInTime(a.row, b.row)) continue;
      const reason = conflict(a, b);
      if (!reason) continue;
      found.push({ description: `${quote(a.row.content)} conflicts with ${quote(b.row.content)}: ${reason}`, memory_ids: [a.row.id, b.row.id] });
      if (found.length === MAX_CONTRADICTIONS) return found;
    }
  }
  return found;
}
