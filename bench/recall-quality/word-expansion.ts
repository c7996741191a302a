// Document expansion in the embedder's own space (issue 29, seventh step): the vocabulary words
// whose USE-lite vector lies nearest a memory's vector. The use-static table (use-static.ts) holds
// USE-lite's output for each of its 8,000 sentencepiece tokens fed alone, so its whole-word rows
// ("▁activities") are USE-lite vectors of single words, in the same space as the stored turns'.
// A turn about camping with the kids may lie near "activities" or "family" without saying either:
// those words, indexed beside the turn's own, let a question's abstract word match it lexically.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTable, modelDir } from '../../src/workers/embedding/use-static.js';
import { isStopword } from '../../src/workers/recall/query-text.js';

const DIMENSIONS = 512;

export interface WordTable {
  words: string[];
  /** Row i: word i's unit vector (centred first when asked). */
  rows: Float32Array;
}

/** The whole-word tokens of USE-lite's vocabulary (letters only, 3+, no stopword), each a unit row. */
export async function wordTable(centre: boolean): Promise<WordTable> {
  const vocabulary = JSON.parse(readFileSync(join(modelDir(), 'vocab.json'), 'utf8')) as [string, number][];
  const table = await loadTable(vocabulary.length);
  const ids = vocabulary.flatMap(([piece], id) => (/^▁[a-z]{3,}$/.test(piece) && !isStopword(piece.slice(1)) ? [id] : []));
  const rows = new Float32Array(ids.length * DIMENSIONS);
  ids.forEach((id, i) => rows.set(table.subarray(id * DIMENSIONS, (id + 1) * DIMENSIONS), i * DIMENSIONS));
  if (centre) {
    // The one-token outputs share a common direction: without it, nearness says more about the word.
    const mean = new Float32Array(DIMENSIONS);
    for (let i = 0; i < ids.length; i++) for (let d = 0; d < DIMENSIONS; d++) mean[d] += rows[i * DIMENSIONS + d] / ids.length;
    for (let i = 0; i < ids.length; i++) for (let d = 0; d < DIMENSIONS; d++) rows[i * DIMENSIONS + d] -= mean[d];
  }
  for (let i = 0; i < ids.length; i++) {
    let norm = 0;
    for (let d = 0; d < DIMENSIONS; d++) norm += rows[i * DIMENSIONS + d] ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < DIMENSIONS; d++) rows[i * DIMENSIONS + d] /= norm;
  }
  return { words: ids.map((id) => vocabulary[id]![0].slice(1)), rows };
}

/** The `k` words nearest the vector, nearest first. */
export function nearestWords(table: WordTable, vector: Float32Array, k: number): string[] {
  const count = table.words.length;
  const scores = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    let dot = 0;
    const offset = i * DIMENSIONS;
    for (let d = 0; d < DIMENSIONS; d++) dot += table.rows[offset + d] * vector[d];
    scores[i] = dot;
  }
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => scores[b] - scores[a]);
  return order.slice(0, k).map((i) => table.words[i]);
}
