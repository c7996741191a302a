// FSRS memory model pieces used across threads. Stability S is in days; retrievability
// R(t) = (1 + t / (9·S))⁻¹ is the probability a memory is still "recallable" t days after
// its last access (FSRS-4.5 power forgetting curve, whose R(S) = 0.9).
import type { MemoryType } from './schemas.js';

export const DAY_MS = 86_400_000;

/** FSRS difficulty scale is 1..10; new memories start in the middle. */
export const INITIAL_DIFFICULTY = 5;

// FSRS-4.5 default initial stabilities for the grades "again" and "easy" (w0 and w3); a
// memory's confidence picks a point between them.
const S_AGAIN = 0.4;
const S_EASY = 5.8;

export function initialStability(memoryType: MemoryType, confidence: number): number {
  // Episodic turns are raw transcript: they start at the "good" grade regardless of confidence.
  if (memoryType === 'episodic') return 2.4;
  const stability = S_AGAIN + (S_EASY - S_AGAIN) * Math.min(1, Math.max(0, confidence));
  return Math.round(stability * 1000) / 1000;
}

export function retrievability(stabilityDays: number, elapsedMs: number): number {
  const t = Math.max(0, elapsedMs) / DAY_MS;
  return 1 / (1 + t / (9 * Math.max(stabilityDays, 1e-6)));
}

// FSRS-4.5 default weights for the stability increase after a successful review.
const W8 = 1.49;
const W9 = 0.14;
const W10 = 0.94;

/**
 * Stability after a successful recall ("good" grade). The less retrievable the memory was,
 * the more a recall strengthens it (spacing effect); recalling it again at once adds ~nothing.
 */
export function reinforcedStability(stabilityDays: number, difficulty: number, elapsedMs: number): number {
  const r = retrievability(stabilityDays, elapsedMs);
  const growth = Math.exp(W8) * (11 - difficulty) * Math.pow(stabilityDays, -W9) * (Math.exp(W10 * (1 - r)) - 1);
  return Math.round(stabilityDays * (1 + growth) * 1000) / 1000;
}
