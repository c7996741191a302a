// Contradiction check over the semantic memories a recall returns. Deterministic and
// offline: each fact is reduced to (owner, attribute, value, polarity); two facts conflict when
//   - a single-valued attribute (where someone lives, works, is from, their age, "my X is")
//     has different values ("lives in Berlin" / "lives in Madrid"), or
//   - the same statement appears once affirmed and once negated ("likes tea" / "does not like tea"), or
//   - the statements are identical except for numbers or dates ("has 2 cats" / "has 3 cats").
// Multi-valued attributes (likes, has, is allergic to) never conflict by value alone, so
// "likes tea" and "likes coffee" raise nothing.
import type { ContradictionRecord } from '../../shared/schemas.js';
import type { MemoryRow } from '../port/rows.js';

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

const SINGLE_VALUED: { attribute: string; pattern: RegExp }[] = [
  { attribute: 'lives in', pattern: /\b(?:lives|living|resides|is based|moved) (?:in|to) (.+)$/ },
  { attribute: 'is from', pattern: /\b(?:is|comes) from (.+)$/ },
  { attribute: 'works at', pattern: /\bworks (?:at|for) (.+)$/ },
  { attribute: 'works as', pattern: /\bworks as (?:an? )?(.+)$/ },
  { attribute: 'age', pattern: /\bis (\d+) years? old\b/ },
  { attribute: 'is married to', pattern: /\bis married to (.+)$/ },
  { attribute: 'born', pattern: /\bwas born (?:on|in) (.+)$/ },
  { attribute: 'name', pattern: /\bname is (.+)$/ },
  // "<owner>'s favourite colour is blue", "my birthday is in May"
  { attribute: '$1', pattern: /(?:'s|\bmy|\bher|\bhis|\btheir) ((?:favou?rite )?[a-z ]{2,30}?) (?:is|are) (.+)$/ },
];

/** Numbers only conflict in statements of state (quantities, times, ages), not of events. */
const STATE_VERB = /\b(?:is|are|was|has|have|owns|costs|earns|weighs|measures|needs|takes|lasts|starts|ends|scheduled|due|born|old)\b/;
/** "museum number 7", "room 12", "#3": identifiers, not quantities. */
const IDENTIFIER_NUMBER = /\b(?:number|no\.?|room|floor|version|chapter|page|step|item|#)\s*\d/;

// Negated forms map to their affirmative so "is not vegetarian" compares with "is vegetarian".
const NEGATIONS: [RegExp, string][] = [
  [/\b(?:does not|doesn't|do not|don't|did not|didn't|never|no longer)\s+/g, ''],
  [/\b(?:is not|isn't)\b/g, 'is'],
  [/\b(?:are not|aren't)\b/g, 'are'],
  [/\b(?:was not|wasn't)\b/g, 'was'],
  [/\b(?:has not|hasn't)\b/g, 'has'],
  [/\bnot\s+/g, ''],
];
const NUMBER = /\b\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm)?\b/g;

/** The affirmative form of a statement, and whether it was negated. */
function affirmative(text: string): { affirmed: string; negated: boolean } {
  let affirmed = text;
  let negated = false;
  for (const [pattern, replacement] of NEGATIONS) {
    affirmed = affirmed.replace(pattern, () => {
      negated = true;
      return replacement;
    });
  }
  return { affirmed: affirmed.replace(/\s+/g, ' ').trim(), negated };
}

/** Words crudely singularised, so "likes" and "(does not) like" compare equal. */
function singularised(text: string): string {
  return text.split(' ').map((w) => (w.length > 3 && /[^s]s$/.test(w) ? w.slice(0, -1) : w)).join(' ');
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/[’`]/g, "'").replace(/[.!?;]+\s*$/, '').replace(/\s+/g, ' ').trim();
}

function claimOf(row: MemoryRow): Claim {
  const text = normalise(row.content);
  const { affirmed, negated } = affirmative(text);
  const plain = singularised(affirmed);
  let attribute: string | null = null;
  let value = '';
  for (const rule of SINGLE_VALUED) {
    const match = rule.pattern.exec(affirmed);
    if (!match) continue;
    if (rule.attribute === '$1') {
      attribute = `'s ${match[1].trim()}`;
      value = match[2].trim();
    } else {
      attribute = rule.attribute;
      value = match[1].trim();
    }
    break;
  }
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

export function findContradictions(memories: MemoryRow[]): ContradictionRecord[] {
  const claims = memories.filter((m) => m.memory_type === 'semantic').map(claimOf);
  const found: ContradictionRecord[] = [];
  for (let i = 0; i < claims.length; i++) {
    for (let j = i + 1; j < claims.length; j++) {
      const [a, b] = [claims[i], claims[j]];
      // Facts about different entities cannot contradict each other.
      if (a.row.entity_id === null || a.row.entity_id !== b.row.entity_id) continue;
      const reason = conflict(a, b);
      if (!reason) continue;
      found.push({ description: `${quote(a.row.content)} conflicts with ${quote(b.row.content)}: ${reason}` });
      if (found.length === MAX_CONTRADICTIONS) return found;
    }
  }
  return found;
}
