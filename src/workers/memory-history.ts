// GET /v1/memories/{id}/history (docs/time.md): a memory, the values its attribute had over time
// (the supersession chain, oldest first) and its life events, from what the row records:
// stored (created_at), reinforced (recalls: access_count, the last at last_access_at), promoted
// from (the episodic memories consolidation merged into it), decayed (decayed_at), archived,
// superseded (valid_until, by superseded_by) and restored (restored_at: put back from a deletion snapshot).
import type { MemoryHistoryResult } from '../shared/schemas.js';
import { isoWithOffset } from '../shared/text.js';
import { HISTORY_LINKS, type HistoryRows } from './port/rows.js';
import { ResponseBudget } from './port/response-budget.js';
import { toMemory } from './recall/engine.js';

type Event = MemoryHistoryResult['events'][number];

/**
 * The answer within `budgetBytes` (SERVICE_MAX_RESPONSE_BYTES), as recall and inspect: the memory
 * always, then the chain links closest to it in time, then the newest promoted_from events, while
 * they fit. `truncated`: links or events were left out (the budget, or more than HISTORY_LINKS).
 */
export function memoryHistory(rows: HistoryRows, budgetBytes: number): { answer: MemoryHistoryResult; truncated: boolean } {
  const { row } = rows;
  const budget = new ResponseBudget<{ content: string }>((item) => item.content, budgetBytes);
  budget.take(row);
  const chain = rows.chain.slice(0, HISTORY_LINKS).filter((link) => budget.take(link));
  const promotedFrom = rows.promotedFrom.slice(0, HISTORY_LINKS).filter(() => budget.take({ content: '' }));
  const truncated = budget.result().truncated || rows.chain.length > chain.length || rows.promotedFrom.length > promotedFrom.length;
  chain.sort((a, b) => a.occurred_at - b.occurred_at || a.rowid - b.rowid);
  return { answer: answerOf(row, chain, promotedFrom), truncated };
}

function answerOf(row: HistoryRows['row'], chain: HistoryRows['chain'], promotedFrom: HistoryRows['promotedFrom']): MemoryHistoryResult {
  const events: (Event & { ms: number })[] = [{ event: 'stored', at: isoWithOffset(row.created_at), ms: row.created_at }];
  for (const source of promotedFrom) {
    events.push({ event: 'promoted_from', at: isoWithOffset(source.created_at), memory_id: source.id, ms: source.created_at });
  }
  if (row.access_count > 0) {
    events.push({ event: 'reinforced', at: isoWithOffset(row.last_access_at), count: row.access_count, ms: row.last_access_at });
  }
  if (row.decayed_at !== null) events.push({ event: 'decayed', at: isoWithOffset(row.decayed_at), ms: row.decayed_at });
  // Archiving happens in a decay step; its own time is not recorded.
  if (row.archived) events.push({ event: 'archived', at: row.decayed_at === null ? null : isoWithOffset(row.decayed_at), ms: row.decayed_at ?? Infinity });
  if (row.valid_until !== null && row.superseded_by !== null) {
    events.push({ event: 'superseded', at: isoWithOffset(row.valid_until), memory_id: row.superseded_by, ms: row.valid_until });
  }
  if (row.restored_at !== null) events.push({ event: 'restored', at: isoWithOffset(row.restored_at), ms: row.restored_at });
  events.sort((a, b) => a.ms - b.ms);
  return {
    memory: toMemory(row, null),
    chain: chain.map((link) => toMemory(link, null)),
    events: events.map(({ ms: _ms, ...event }) => event),
  };
}
