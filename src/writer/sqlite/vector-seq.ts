// The number stamped on a memory each time a vector is attached to it (memories.vector_seq,
// migration 14): later attachments get higher numbers, so the shared vector codes
// (workers/sqlite/vector-codes.ts) find everything attached since they were built with one index
// range, a re-embedding of an older memory included. One writer thread commits in the order it
// stamps, so a reader's snapshot holds every number up to some point and none above it.
//
// Milliseconds × 1024, then +1 per stamp: numbers keep growing across a writer restart (no
// reading of the file at start, and a deleted memory's number is never given again) as long as
// fewer than 1,024 vectors a millisecond are attached, far above what one writer commits.
const PER_MS = 1024;
let last = 0;

export function nextVectorSeq(now = Date.now()): number {
  last = Math.max(last + 1, now * PER_MS);
  return last;
}
