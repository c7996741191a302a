// The rows the read port hands back, whichever adapter read them (SQLite: sqlite/read-store.ts,
// PostgreSQL: postgres/read-port.ts); recall, inspect and the pool's handlers read only these.
import type { EpisodeSummaryRecord, MemoryType, Outcome } from '../../shared/schemas.js';

/** A memory row as the recall and inspect paths need it. */
export interface MemoryRow {
  rowid: number;
  id: string;
  content: string;
  memory_type: MemoryType;
  confidence: number;
  stability: number;
  last_access_at: number;
  created_at: number;
  episode_id: string | null;
  seq: number | null;
  role: string | null;
  entity_id: string | null;
  /** 1 rules or direct, 2 LLM: inspect shows it on extracted memories (the console's tier). */
  extraction_tier: number;
  /** When it was said or became true; valid until / replaced by (docs/time.md). */
  occurred_at: number;
  valid_until: number | null;
  superseded_by: string | null;
}

/** At most this many chain links and promoted_from events in one history answer. */
export const HISTORY_LINKS = 1000;

/**
 * A memory's history as storage holds it (workers/memory-history.ts makes the answer and cuts it
 * exactly to the response budget). Both lists are bounded: up to HISTORY_LINKS + 1 rows (one
 * more says there were more), and the chain stops after the link whose content crosses the budget.
 */
export interface HistoryRows {
  row: MemoryRow & { access_count: number; decayed_at: number | null; archived: number; restored_at: number | null };
  /** The owner's facts of the same attribute (the row itself when it has none), closest in occurred_at first. */
  chain: MemoryRow[];
  /** The episodic memories consolidation promoted into it, newest first. */
  promotedFrom: { id: string; created_at: number }[];
}

export interface EpisodeRow {
  id: string;
  started_at: number;
  last_activity_at: number;
  ended_at: number | null;
}

/** An episode as the episode list reads it (times in epoch ms). */
export interface EpisodeListRow {
  id: string;
  started_at: number;
  ended_at: number | null;
  outcome: Outcome | null;
  message_count: number;
}

/** The list's answer: each episode with its participants' names (by episode id, in their order). */
export function episodeSummaries(rows: EpisodeListRow[], names: Map<string, string[]>): EpisodeSummaryRecord[] {
  return rows.map((row) => ({
    episode_id: row.id,
    participants: names.get(row.id) ?? [],
    started_at: new Date(row.started_at).toISOString(),
    ended_at: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
    outcome: row.outcome,
    message_count: row.message_count,
  }));
}
