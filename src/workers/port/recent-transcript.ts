// What `end` reads of an episode: the most recent turns whose text fits extraction's budget, the
// newest one always (whole: a turn is at most MAX_CONTENT_LENGTH), and only the roles of the
// turns before them (who spoke last decides whom "you" means). The sizes are counted by the
// database, so an older turn's text is never loaded: `end` of a transcript of any length reads a
// bounded amount of text.

/** A turn as extraction reads it (the id: the turns read are checked against a racing delete). */
export interface TranscriptRow {
  id: string;
  role: string;
  content: string;
}

export interface RecentTranscript {
  /** The most recent turns within the budget, oldest first. */
  turns: TranscriptRow[];
  /** The roles of every turn before them, oldest first. */
  earlierRoles: string[];
}

/** A turn's position, role and length in characters, as the database counts them. */
export interface TurnSize {
  seq: number;
  role: string;
  chars: number;
}

/**
 * The index in `sizes` (oldest first) of the oldest turn read: going back from the newest, turns
 * are kept while their characters fit `budget` together, and the newest whatever its length.
 */
export function firstRecentTurn(sizes: readonly TurnSize[], budget: number): number {
  let left = budget;
  let first = sizes.length;
  while (first > 0 && (first === sizes.length || sizes[first - 1].chars <= left)) {
    first--;
    left -= sizes[first].chars;
  }
  return first;
}

/** Which turns to read whole: seq `fromSeq` to `toSeq`, and the roles before them. */
export interface RecentRead {
  fromSeq: number;
  toSeq: number;
  earlierRoles: string[];
}

/**
 * What to read of a transcript whose turns measure `sizes` (oldest first): null when it has none.
 * Up to the newest turn counted: one added since is not read (the sizes did not include it).
 */
export function recentRead(sizes: readonly TurnSize[], budget: number): RecentRead | null {
  if (sizes.length === 0) return null;
  const first = firstRecentTurn(sizes, budget);
  return { fromSeq: sizes[first].seq, toSeq: sizes[sizes.length - 1].seq, earlierRoles: sizes.slice(0, first).map((turn) => turn.role) };
}
