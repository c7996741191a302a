// The conversation lift (recall/conversation.ts): a turn gains a fraction of the best fused score
// among the turns at most `reach` away in its own episode — the best one, not a sum over the
// window, and read from the fused scores, so lifts never chain along a session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { liftedByNeighbours, NEIGHBOUR_REACH } from '../src/workers/recall/conversation.js';
import type { CandidateRow } from '../src/workers/port/candidates.js';

const turn = (rowid: number, episode: string, seq: number): CandidateRow =>
  ({ rowid, memory_type: 'episodic', episode_id: episode, seq, confidence: 1, created_at: rowid });
const fact = (rowid: number): CandidateRow => ({ rowid, memory_type: 'semantic', episode_id: null, seq: null, confidence: 1, created_at: rowid });

// Episode a: seq 0..5; the strong turn is seq 2 (rowid 3). Episode b: seq 0..1. One fact.
const rows = new Map<number, CandidateRow>([
  ...[0, 1, 2, 3, 4, 5].map((seq): [number, CandidateRow] => [seq + 1, turn(seq + 1, 'a', seq)]),
  [11, turn(11, 'b', 0)], [12, turn(12, 'b', 1)], [20, fact(20)],
]);
const scores = new Map([[1, 0], [2, 0.1], [3, 1], [4, 0], [5, 0.2], [6, 0], [11, 0.5], [12, 0], [20, 0.9]]);

test('the same speaker\'s turn on the far side of a reply is lifted by the strong turn at reach 2, not at reach 1', () => {
  assert.equal(NEIGHBOUR_REACH, 1, 'the default: adjacent turns only');
  const near = liftedByNeighbours(rows, scores, 0.4, 1);
  const far = liftedByNeighbours(rows, scores, 0.4, 2);
  // seq 4 (rowid 5) is two turns after the strong seq 2.
  assert.ok(Math.abs(near.get(5)! - (0.2 + 0.4 * 0)) < 1e-12, 'reach 1: its neighbours (seq 3, 5) score 0');
  assert.ok(Math.abs(far.get(5)! - (0.2 + 0.4 * 1)) < 1e-12, 'reach 2: lifted by seq 2');
  // seq 0 (rowid 1) is two turns before it: lifted too; seq 5 (rowid 6) three after: only by seq 4.
  assert.ok(Math.abs(far.get(1)! - 0.4) < 1e-12);
  assert.ok(Math.abs(far.get(6)! - 0.4 * 0.2) < 1e-12, 'three turns away: only its own neighbours count');
});

test('the lift is the best neighbour\'s score, not a sum, and does not chain or cross episodes', () => {
  const lifted = liftedByNeighbours(rows, scores, 0.4, 2);
  // seq 3 (rowid 4) has seq 2 (1.0), seq 4 (0.2), seq 1 (0.1), seq 5 (0) within reach: the best only.
  assert.ok(Math.abs(lifted.get(4)! - 0.4) < 1e-12);
  // The strong turn itself is lifted by its best neighbour's fused score (0.2), not by anyone's lifted one.
  assert.ok(Math.abs(lifted.get(3)! - (1 + 0.4 * 0.2)) < 1e-12);
  // Episode b is not lifted by episode a's strong turn; its own neighbour lifts it.
  assert.ok(Math.abs(lifted.get(12)! - 0.4 * 0.5) < 1e-12);
  // A fact has no neighbours.
  assert.equal(lifted.get(20), 0.9);
  // Weight 0: the scores as they were.
  assert.equal(liftedByNeighbours(rows, scores, 0, 2), scores);
});
