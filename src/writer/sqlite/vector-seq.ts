import type { Db } from '../../shared/db.js';
// The number stamped on a memory each time a vector is attached to it (memories.vector_seq,
// migration 14): later attachments get higher numbers, so the shared vector codes
// (workers/sqlite/vector-codes.ts) find everything attached since they were built with one index
// range, a re-embedding of an older memory included. One writer thread commits in the order it
// stamps, so a reader's snapshot holds every number up to some point and none above it.
//
// Milliseconds × 1024, then +1 per stamp (fewer than 1,024 vectors a millisecond are attached,
// far above what one writer commits). The writer starts above the file's highest stamp
// (`continueVectorSeq`), so numbers keep growing across a restart even when this clock is behind
// the one that stamped the file (a clock stepped back, a file copied from another host): a
// smaller number would hide the vector from every store built before it.
const PER_MS = 1024;
let last = 0;

/** Continues above the highest stamp in the file (one index seek per namespace). */
export function continueVectorSeq(db: Db): void {
  const highest = db.prepare(`SELECT max(highest) AS highest FROM (SELECT (SELECT max(vector_seq) FROM memories
      WHERE namespace_id = n.id AND embedded = 1 AND vector_seq IS NOT NULL) AS highest FROM namespaces n)`).get() as { highest: number | null };
  last = Math.max(last, highest.highest ?? 0);
}

export function nextVectorSeq(now = Date.now()): number {
  last = Math.max(last + 1, now * PER_MS);
  return last;
}
