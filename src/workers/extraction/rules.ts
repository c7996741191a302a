// Tier-1 extraction: deterministic rules over clear first-person statements (the table is in
// fact-rules.ts) and how-to steps. It is the fallback whenever the LLM extractor is
// unavailable, so it must never throw.
import type { ExtractedMemory } from '../../shared/protocol/writer.js';
import type { Outcome } from '../../shared/schemas.js';
import { contentKey } from '../../shared/text.js';
import { FACT_RULES } from './fact-rules.js';

export interface TranscriptTurn {
  role: string;
  content: string;
}

/** How-to steps: imperative sentences that say how something is done, and numbered steps. */
const PROCEDURE = new RegExp([
  String.raw`^(?:to [^,]{3,80}, |first,? |then,? |next,? |finally,? |afterwards,? |always |never |make sure |remember to |don't forget to )`,
  String.raw`^step \d+[:.)]? `,
  String.raw`^\d{1,2}[.)] +\S`,
  String.raw`^(?:here's |here is )?how to [^:]{3,80}: `,
  String.raw`^the (?:trick|fix|solution|way to [^,]{3,60}) is (?:to )?`,
].join('|'), 'i');

const AGENT_ROLES = new Set(['assistant', 'agent', 'system', 'tool', 'bot']);

/** Openers that carry no content: "Well, I live in …", "Hi! I'm …". */
const LEAD_IN = /^(?:well|also|oh|and|so|btw|by the way|actually|anyway|yes|yeah|yep|no|nope|hi|hello|hey|ok|okay|um|fyi|just so you know|oh and|plus|honestly)\b[,!.]?\s+/i;

/**
 * Sentences of a turn, lines first. A sentence break needs end punctuation and a space, but
 * not after a list number ("1. Open settings" stays one step).
 */
export function sentences(text: string): string[] {
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .split(/\n+|(?<=[.!?])(?<!(?:^|\s)\d{1,2}\.)\s+/)
    .map((s) => {
      let sentence = s.trim().replace(/^[-*•]\s+/, '');
      for (let previous = ''; previous !== sentence; ) {
        previous = sentence;
        sentence = sentence.replace(LEAD_IN, '');
      }
      return sentence;
    })
    .filter(Boolean);
}

/**
 * The template with `$S` and `$1`.. filled in, in one pass and through a function, so the
 * subject's name and the captured text are inserted literally: a name like "A$&B" or "Bob$1"
 * is neither a replacement pattern nor a placeholder for a later pass.
 */
function fill(template: string, subject: string, groups: string[]): string {
  return template
    .replace(/\$(S|\d)/g, (_, key: string) => (key === 'S' ? subject : (groups[Number(key) - 1] ?? '').trim()))
    .replace(/\s+/g, ' ')
    .trim();
}

/** Procedural confidence follows the episode's outcome: what worked is trusted more. */
export function outcomeAdjusted(confidence: number, outcome: Outcome | null): number {
  const factor = outcome === 'success' ? 1.15 : outcome === 'failure' ? 0.5 : outcome === 'partial' ? 0.8 : 1;
  return Math.min(1, Math.round(confidence * factor * 1000) / 1000);
}

export function extractByRules(turns: TranscriptTurn[], subject: string, outcome: Outcome | null): ExtractedMemory[] {
  const out = new Map<string, ExtractedMemory>();
  const add = (memory: Omit<ExtractedMemory, 'extraction_tier' | 'entities'>) => {
    const key = contentKey(memory.content);
    if (key.length > 0 && !out.has(key)) out.set(key, { ...memory, extraction_tier: 1, entities: [subject] });
  };
  for (const turn of turns) {
    const fromAgent = AGENT_ROLES.has(turn.role.toLowerCase());
    for (const sentence of sentences(turn.content)) {
      if (PROCEDURE.test(sentence) && sentence.length <= 300) {
        add({ content: sentence.replace(/[.!]+$/, ''), memory_type: 'procedural', confidence: outcomeAdjusted(0.7, outcome) });
        continue;
      }
      if (fromAgent) continue; // first-person facts are only taken from the non-agent side
      const rule = FACT_RULES.find((r) => r.pattern.test(sentence));
      if (!rule) continue;
      const groups = sentence.match(rule.pattern)!.slice(1);
      add({ content: fill(rule.template, subject, groups), memory_type: 'semantic', confidence: rule.confidence });
    }
  }
  return [...out.values()];
}
