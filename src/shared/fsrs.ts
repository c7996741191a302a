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

// FSRS-4.5 default weights for a lapse (grade "again"): post-lapse stability (w11..w14) and
// the difficulty step (w6) with mean reversion (w7) towards the initial difficulty.
const W6 = 0.86;
const W7 = 0.01;
const W11 = 2.18;
const W12 = 0.05;
const W13 = 0.34;
const W14 = 1.26;
/** FSRS keeps stability above this floor (days). */
export const MIN_STABILITY = 0.01;

/**
 * Stability after a lapse, when the memory had retrievability `r`: FSRS's post-lapse formula,
 * never above the stability before (a lapse cannot strengthen a memory).
 */
export function lapsedStability(stabilityDays: number, difficulty: number, r: number): number {
  const next = W11 * Math.pow(difficulty, -W12) * (Math.pow(stabilityDays + 1, W13) - 1) * Math.exp(W14 * (1 - r));
  return Math.round(Math.max(MIN_STABILITY, Math.min(stabilityDays, next)) * 1000) / 1000;
}

/** Difficulty after a lapse: one "again" step up, pulled slightly back to the start, within 1..10. */
export function lapsedDifficulty(difficulty: number): number {
  const stepped = difficulty + 2 * W6;
  const reverted = W7 * INITIAL_DIFFICULTY + (1 - W7) * stepped;
  return Math.round(Math.min(10, Math.max(1, reverted)) * 1000) / 1000;
}
