// Tier-1 extraction: deterministic rules over clear first-person statements. It is the
// fallback whenever the LLM extractor is unavailable, so it must never throw.
import type { ExtractedMemory } from '../../shared/messages.js';
import type { Outcome } from '../../shared/schemas.js';
import { contentKey } from '../../shared/text.js';

export interface TranscriptTurn {
  role: string;
  content: string;
}

interface FactRule {
  pattern: RegExp;
  /** `$S` is the subject's name; `$1`.. are the captured groups. */
  template: string;
  confidence: number;
}

const END = String.raw`([^.!?\n]{1,160})`;
const FACT_RULES: FactRule[] = [
  { pattern: new RegExp(String.raw`^i(?:'m| am) (?:severely |very |really )?allergic to ${END}`, 'i'), template: '$S is allergic to $1', confidence: 0.95 },
  { pattern: new RegExp(String.raw`^my name is ${END}`, 'i'), template: "$S's name is $1", confidence: 0.95 },
  { pattern: new RegExp(String.raw`^i live in ${END}`, 'i'), template: '$S lives in $1', confidence: 0.9 },
  { pattern: new RegExp(String.raw`^i(?:'ve| have) moved to ${END}`, 'i'), template: '$S lives in $1', confidence: 0.9 },
  { pattern: new RegExp(String.raw`^i(?:'m| am) from ${END}`, 'i'), template: '$S is from $1', confidence: 0.9 },
  { pattern: new RegExp(String.raw`^i work (at|for|as|on|in) ${END}`, 'i'), template: '$S works $1 $2', confidence: 0.85 },
  { pattern: new RegExp(String.raw`^i (?:really )?(like|love|enjoy|prefer|hate|dislike|need|want|use) ${END}`, 'i'), template: '$S $1s $2', confidence: 0.8 },
  { pattern: new RegExp(String.raw`^i (?:don't|do not|never) (like|eat|drink|use|want|enjoy) ${END}`, 'i'), template: '$S does not $1 $2', confidence: 0.8 },
  { pattern: new RegExp(String.raw`^i(?:'ve| have) (?:got )?(an? |two |three |\d+ )${END}`, 'i'), template: '$S has $1$2', confidence: 0.8 },
  { pattern: new RegExp(String.raw`^my ([\p{L}\p{N} ]{1,40}?) (is|are) ${END}`, 'iu'), template: "$S's $1 $2 $3", confidence: 0.85 },
  { pattern: new RegExp(String.raw`^i(?:'m| am) (?:planning|going) to ${END}`, 'i'), template: '$S plans to $1', confidence: 0.7 },
  { pattern: new RegExp(String.raw`^i plan to ${END}`, 'i'), template: '$S plans to $1', confidence: 0.7 },
  { pattern: new RegExp(String.raw`^i(?:'m| am) (an? [^.!?\n]{1,80})`, 'i'), template: '$S is $1', confidence: 0.8 },
];

/** How-to steps: imperative sentences that say how something is done. */
const PROCEDURE = /^(?:to [^,]{3,80}, |first,? |then,? |next,? |finally,? |always |never |make sure |remember to |step \d+[:.)]? )/i;

const AGENT_ROLES = new Set(['assistant', 'agent', 'system', 'tool', 'bot']);

function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).map((s) => s.trim().replace(/^(?:well|also|oh|and|so|btw|by the way),?\s+/i, '')).filter(Boolean);
}

function fill(template: string, subject: string, groups: string[]): string {
  return template
    .replace('$S', subject)
    .replace(/\$(\d)/g, (_, n: string) => (groups[Number(n) - 1] ?? '').trim())
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
