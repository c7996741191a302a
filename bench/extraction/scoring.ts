// How stored memories compare with the reference facts: token F1 (SQuAD-style normalisation:
// lower case, punctuation and articles dropped, multiset overlap), coverage, precision and the
// malformed share.

/** A stored fact about a person names the person: one that keeps a first- or second-person pronoun is malformed. */
const PERSONAL_PRONOUN = /\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves|you|your|yours|yourself|yourselves)\b/i;
export const COVERAGE_F1 = 0.5;
export const PRECISION_F1 = 0.4;

export function tokens(text: string): string[] {
  return text.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, '').split(/\s+/).filter((w) => w && w !== 'a' && w !== 'an' && w !== 'the');
}

export function tokenF1(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const w of b) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of a) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / a.length;
  const recall = common / b.length;
  return (2 * precision * recall) / (precision + recall);
}

export const isMalformed = (memory: string) => PERSONAL_PRONOUN.test(memory);

export interface Tally {
  observations: number;
  covered: number;
  memories: number;
  matching: number;
  malformed: number;
}

export const emptyTally = (): Tally => ({ observations: 0, covered: 0, memories: 0, matching: 0, malformed: 0 });

/** Adds one session: its stored memories against its reference observations. */
export function score(tally: Tally, memories: string[], observations: string[]): void {
  const m = memories.map(tokens);
  const o = observations.map(tokens);
  tally.observations += o.length;
  tally.memories += m.length;
  tally.covered += o.filter((obs) => m.some((mem) => tokenF1(mem, obs) >= COVERAGE_F1)).length;
  tally.matching += m.filter((mem) => o.some((obs) => tokenF1(mem, obs) >= PRECISION_F1)).length;
  tally.malformed += memories.filter(isMalformed).length;
}

export const ratio = (n: number, d: number) => (d === 0 ? 0 : n / d);
