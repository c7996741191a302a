// Tier-1 extraction: facts each participant states about themselves, and marked how-to steps,
// read with an NLP library (nlp.ts) rather than matched as strings. Each turn's "I" and "you"
// are resolved to people (speakers.ts); each sentence is cut into clauses (clauses.ts) and a
// clause the rules understand becomes a third-person fact (third-person.ts). Precision comes
// before coverage: what is not understood is not stored. It is the fallback whenever the LLM
// extractor is unavailable, so it must never throw.
import type { ExtractedMemory } from '../../shared/protocol/writer.js';
import type { EntityRecord, Outcome } from '../../shared/schemas.js';
import { contentKey } from '../../shared/text.js';
import { clausesOf } from './clauses.js';
import { analyse, type Token } from './nlp.js';
import { procedureOf } from './procedures.js';
import { voicesOf } from './speakers.js';
import { factOf, render } from './third-person.js';

export interface TranscriptTurn {
  role: string;
  content: string;
}

/** Facts are stored at this confidence: a rule read them, nobody confirmed them. */
const FACT_CONFIDENCE = 0.7;
const PROCEDURE_CONFIDENCE = 0.7;
/** Longer clauses are mostly run-on chat; what they state is not reliably one fact. */
const MAX_FACT_WORDS = 40;
const CONDITIONAL = new Set(['if', 'unless']);
/**
 * Text the rules read per episode (~0.5–1 ms of the pool thread's CPU per 100-character turn):
 * the most recent turns that fit, so a transcript of any length costs `end` a bounded time and
 * the latest statements (corrections included) are the ones read.
 */
export const MAX_RULE_TEXT_CHARS = 64_000;

/** Procedural confidence follows the episode's outcome: what worked is trusted more. */
export function outcomeAdjusted(confidence: number, outcome: Outcome | null): number {
  const factor = outcome === 'success' ? 1.15 : outcome === 'failure' ? 0.5 : outcome === 'partial' ? 0.8 : 1;
  return Math.min(1, Math.round(confidence * factor * 1000) / 1000);
}

/**
 * The turns the rules read: the most recent ones whose text fits MAX_RULE_TEXT_CHARS together. A
 * newest turn longer than that on its own is read up to the last sentence end that fits.
 */
export function turnsWithinBudget(turns: TranscriptTurn[], budget = MAX_RULE_TEXT_CHARS): { index: number; content: string }[] {
  const kept: { index: number; content: string }[] = [];
  let left = budget;
  for (let i = turns.length - 1; i >= 0; i--) {
    const content = turns[i].content;
    if (content.length <= left) {
      kept.push({ index: i, content });
      left -= content.length;
      continue;
    }
    if (kept.length === 0) {
      const head = content.slice(0, budget);
      const end = Math.max(head.lastIndexOf('\n'), ...['.', '!', '?'].map((mark) => head.lastIndexOf(mark)));
      if (end > 0) kept.push({ index: i, content: head.slice(0, end + 1) });
    }
    break;
  }
  return kept.reverse();
}

/** Sentences of a turn, one line at a time; a list number on its own joins the line it numbers. */
function sentencesOf(content: string): Token[][] {
  const out: Token[][] = [];
  for (const line of content.split(/\n+/)) {
    let pending: Token[] = [];
    for (const sentence of analyse(line)) {
      if (sentence.every((t) => t.pos === 'NUM' || t.pos === 'PUNCT')) {
        pending = pending.concat(sentence);
        continue;
      }
      out.push(pending.concat(sentence));
      pending = [];
    }
  }
  return out;
}

/**
 * `earlierRoles`: the roles of the turns before `turns` that were not read (`end` reads only the
 * most recent turns' text): who spoke last before a turn decides whom its "you" means.
 */
export function extractByRules(
  turns: TranscriptTurn[], participants: EntityRecord[], outcome: Outcome | null, earlierRoles: readonly string[] = [],
): ExtractedMemory[] {
  const out = new Map<string, ExtractedMemory>();
  const add = (memory: ExtractedMemory) => {
    const key = contentKey(memory.content);
    if (key.length > 0 && !out.has(key)) out.set(key, memory);
  };
  const voices = voicesOf([...earlierRoles.map((role) => ({ role })), ...turns], participants).slice(earlierRoles.length);
  for (const { index, content } of turnsWithinBudget(turns)) {
    const { speaker, addressee, fromAgent } = voices[index];
    for (const sentence of sentencesOf(content)) {
      const step = procedureOf(sentence);
      if (step) {
        const written = render(step, { speaker, addressee });
        const owner = speaker ?? addressee;
        if (written && owner) {
          add({
            content: written.content, memory_type: 'procedural', confidence: outcomeAdjusted(PROCEDURE_CONFIDENCE, outcome),
            extraction_tier: 1, entities: [owner, ...written.mentions.filter((m) => m !== owner)],
          });
        }
        continue;
      }
      // What the agent says about itself is narration, not a memory of the person it serves.
      if (fromAgent || speaker === null) continue;
      // A question asks, a condition supposes: no clause of either states a fact.
      if (sentence.some((t) => t.text === '?' || CONDITIONAL.has(t.lower))) continue;
      for (const clause of clausesOf(sentence)) {
        const fact = factOf(clause, { speaker, addressee });
        // What a speaker says about themselves and the listener ("I'm proud of you", "I'll keep
        // you posted") is about the conversation, not a standing fact about the speaker.
        if (!fact || fact.mentions.length > 0 || fact.content.split(' ').length > MAX_FACT_WORDS) continue;
        add({ content: fact.content, memory_type: 'semantic', confidence: FACT_CONFIDENCE, extraction_tier: 1, entities: [speaker, ...fact.mentions] });
      }
    }
  }
  return [...out.values()];
}
