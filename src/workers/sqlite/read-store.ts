// Read-only queries used by the pool. One instance per worker thread, statements prepared once.
import type { Db } from '../../shared/db.js';
import { onConnection } from '../../shared/connection-statements.js';
import { statementPerLimits } from '../../shared/literal-statements.js';
import type { EntityKind, EntityRecord, ValidatedListEntities, ValidatedListEpisodes, ListEntitiesResult, ListEpisodesResult, StatsResult } from '../../shared/schemas.js';
import { ResponseBudget } from '../port/response-budget.js';
import { recentRead, type RecentTranscript, type TranscriptRow, type TurnSize } from '../port/recent-transcript.js';
import { episodeSummaries, HISTORY_LINKS, type EpisodeListRow, type EpisodeRow, type HistoryRows, type MemoryRow } from '../port/rows.js';

export const MEMORY_COLUMNS = `m.rowid AS rowid, m.id, m.content, m.memory_type, m.confidence, m.stability,
  m.last_access_at, m.created_at, m.episode_id, m.seq, m.role, m.entity_id, m.extraction_tier,
  m.occurred_at, m.valid_until, m.superseded_by`;

/**
 * The episodes the list shows: the namespace's (or those @entity took part in) that some entity
 * still takes part in. One whose participants were all forgotten lost its turns with them: an
 * empty shell, not listed.
 */
export const EPISODES_LISTED = `ep.namespace_id = @ns
  AND (@entity IS NULL OR ep.id IN (SELECT episode_id FROM episode_participants WHERE entity_id = @entity))
  AND EXISTS (SELECT 1 FROM episode_participants p WHERE p.episode_id = ep.id)`;

export class ReadStore {
  private readonly s;

  constructor(readonly db: Db, readonly namespaceId: number, readonly namespace: string) {
    this.s = onConnection(db, ReadStore, () => (db.function('fold', { deterministic: true }, (text) => (typeof text === 'string' ? text.toLowerCase() : text)), {
      entity: db.prepare<[number, string], EntityRecord>(
        'SELECT id, name, kind FROM entities WHERE namespace_id = ? AND name = ?'),
      // Row counts spelled in (shared/literal-statements.ts): a bound LIMIT re-prepares every run.
      entityMemories: statementPerLimits<[string, number], MemoryRow>(db, (limit) => `SELECT ${MEMORY_COLUMNS} FROM memories m
        WHERE m.rowid IN (SELECT memory_rowid FROM memory_entities WHERE entity_id = ? AND relation IN ('owner', 'participant'))
          AND m.archived = 0 AND (? = 1 OR m.superseded_by IS NULL)
        ORDER BY m.created_at DESC, m.rowid DESC LIMIT ${limit}`),
      stats: db.prepare<{ ns: number }, Omit<StatsResult, 'namespace'>>(`SELECT
        (SELECT count(*) FROM entities WHERE namespace_id = @ns) AS entities,
        count(*) FILTER (WHERE memory_type = 'episodic') AS episodic_memories,
        count(*) FILTER (WHERE memory_type = 'semantic') AS semantic_memories,
        count(*) FILTER (WHERE memory_type = 'procedural') AS procedural_memories
        FROM memories WHERE namespace_id = @ns AND archived = 0`),
      episode: db.prepare<[string, number], EpisodeRow>(
        'SELECT id, started_at, last_activity_at, ended_at FROM episodes WHERE id = ? AND namespace_id = ?'),
      episodeStarts: db.prepare<[string], { id: string; started_at: number }>(
        'SELECT id, started_at FROM episodes WHERE id IN (SELECT value FROM json_each(?))'),
      // length() counts the characters in SQLite itself: no turn's text reaches JavaScript here.
      // It stops at a NUL, which SQLite stores (PostgreSQL refuses it): a turn holding one is
      // counted by its bytes instead (never fewer than its characters), so it cannot pass for short.
      turnSizes: db.prepare<[string], TurnSize>(
        `SELECT seq, role, CASE WHEN instr(content, char(0)) > 0 THEN length(CAST(content AS BLOB)) ELSE length(content) END AS chars
          FROM memories WHERE episode_id = ? AND memory_type = 'episodic' ORDER BY seq`),
      turnsFrom: db.prepare<[string, number, number], TranscriptRow>(
        "SELECT id, role, content FROM memories WHERE episode_id = ? AND memory_type = 'episodic' AND seq BETWEEN ? AND ? ORDER BY seq"),
      unembedded: statementPerLimits<[number], { rowid: number; content: string }>(db, (limit) =>
        `SELECT rowid, content FROM memories WHERE namespace_id = ? AND embedded = 0 ORDER BY rowid LIMIT ${limit}`),
      unembeddedNewest: statementPerLimits<[number], { rowid: number; content: string }>(db, (limit) =>
        `SELECT rowid, content FROM memories WHERE namespace_id = ? AND embedded = 0 ORDER BY rowid DESC LIMIT ${limit}`),
      unembeddedCount: db.prepare<[number], { count: number }>(
        'SELECT count(*) AS count FROM memories WHERE namespace_id = ? AND embedded = 0'),
      // `fold`: JavaScript's toLowerCase, so the search ignores case beyond ASCII (SQLite's lower() does not).
      // The page size spelled in like the limits above; the offset, which the planner does not read, stays bound.
      entityPage: statementPerLimits<Record<string, unknown>, { name: string; kind: EntityKind; created_at: number; memory_count: number }>(db, (limit) => `
        SELECT e.name, e.kind, e.created_at, (SELECT count(*) FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid
          WHERE me.entity_id = e.id AND me.relation IN ('owner', 'participant') AND m.archived = 0) AS memory_count
        FROM entities e WHERE e.namespace_id = @ns AND (@q IS NULL OR instr(fold(e.name), @q) > 0)
        ORDER BY e.name LIMIT ${limit} OFFSET @offset`),
      entityTotal: db.prepare<Record<string, unknown>, number>(
        'SELECT count(*) FROM entities e WHERE e.namespace_id = @ns AND (@q IS NULL OR instr(fold(e.name), @q) > 0)').pluck(),
      historyRow: db.prepare<[string, number], HistoryRows['row'] & { fact_attribute: string | null }>(`SELECT ${MEMORY_COLUMNS},
        m.access_count, m.decayed_at, m.archived, m.restored_at, m.fact_attribute FROM memories m WHERE m.id = ? AND m.namespace_id = ?`),
      attributeChain: db.prepare<[string, string, number], MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m
        WHERE m.entity_id = ? AND m.fact_attribute = ? AND m.memory_type = 'semantic'
        ORDER BY abs(m.occurred_at - ?), m.occurred_at, m.rowid LIMIT ${HISTORY_LINKS + 1}`),
      promotedFrom: db.prepare<[number], { id: string; created_at: number }>(
        `SELECT id, created_at FROM memories WHERE promoted_into = ? ORDER BY created_at DESC, rowid DESC LIMIT ${HISTORY_LINKS + 1}`),
      // Messages counted from the turns still stored (seq is set on turns only: memories_by_episode answers it).
      episodePage: statementPerLimits<Record<string, unknown>, EpisodeListRow>(db, (limit) => `SELECT ep.id, ep.started_at, ep.ended_at, ep.outcome,
          (SELECT count(*) FROM memories m WHERE m.episode_id = ep.id AND m.seq IS NOT NULL) AS message_count
        FROM episodes ep WHERE ${EPISODES_LISTED} ORDER BY ep.started_at DESC, ep.id DESC LIMIT ${limit} OFFSET @offset`),
      episodeTotal: db.prepare<Record<string, unknown>, number>(`SELECT count(*) FROM episodes ep WHERE ${EPISODES_LISTED}`).pluck(),
      participantNames: db.prepare<[string], { episode_id: string; name: string }>(`SELECT p.episode_id, e.name FROM episode_participants p
        JOIN entities e ON e.id = p.entity_id WHERE p.episode_id IN (SELECT value FROM json_each(?)) ORDER BY p.episode_id, p.position`),
      participants: db.prepare<[string], EntityRecord>(`SELECT e.id, e.name, e.kind FROM episode_participants p
        JOIN entities e ON e.id = p.entity_id WHERE p.episode_id = ? ORDER BY p.position`),
    }));
  }

  entity(name: string): EntityRecord | undefined {
    return this.s.entity.get(this.namespaceId, name);
  }

  /**
   * The entity's most recent active memories, newest first, read up to the first that no longer
   * fits the response budget (so the caller sees that the answer was cut) and no further. An
   * array, not a lazy iterator: an open statement must not outlive this call, because other
   * tasks use the connection as soon as the caller awaits.
   */
  entityMemories(entityId: string, limit: number, budgetBytes: number, includeSuperseded = false): MemoryRow[] {
    const rows: MemoryRow[] = [];
    const budget = new ResponseBudget<MemoryRow>((row) => row.content, budgetBytes);
    for (const row of this.s.entityMemories(limit).iterate(entityId, includeSuperseded ? 1 : 0)) {
      rows.push(row);
      if (!budget.take(row)) break; // `break` closes the statement
    }
    return rows;
  }

  stats(): StatsResult {
    return { namespace: this.namespace, ...this.s.stats.get({ ns: this.namespaceId })! };
  }

  /** A page of the namespace's entities by name, those whose name contains `q` (any case). */
  entities({ q, limit = 50, offset = 0 }: ValidatedListEntities): ListEntitiesResult {
    const params = { ns: this.namespaceId, q: q ? q.toLowerCase() : null };
    const rows = this.s.entityPage(limit).all({ ...params, offset });
    return {
      entities: rows.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() })),
      total: this.s.entityTotal.get(params)!,
    };
  }

  /** A page of the namespace's episodes, newest started first; only the entity's when one is named (an unknown name: none). */
  episodes({ entity, limit = 50, offset = 0 }: ValidatedListEpisodes): ListEpisodesResult {
    const entityId = entity === undefined ? null : this.entity(entity)?.id;
    if (entityId === undefined) return { episodes: [], total: 0 };
    const params = { ns: this.namespaceId, entity: entityId };
    const rows = this.s.episodePage(limit).all({ ...params, offset });
    const names = new Map<string, string[]>();
    for (const { episode_id: id, name } of this.s.participantNames.all(JSON.stringify(rows.map((row) => row.id)))) {
      names.set(id, [...(names.get(id) ?? []), name]);
    }
    return { episodes: episodeSummaries(rows, names), total: this.s.episodeTotal.get(params)! };
  }

  episode(id: string): EpisodeRow | undefined {
    return this.s.episode.get(id, this.namespaceId);
  }

  episodeStarts(ids: string[]): Map<string, number> {
    return new Map(this.s.episodeStarts.all(JSON.stringify(ids)).map((row) => [row.id, row.started_at]));
  }

  recentTranscript(episodeId: string, budgetChars: number): RecentTranscript {
    const read = recentRead(this.s.turnSizes.all(episodeId), budgetChars);
    if (!read) return { turns: [], earlierRoles: [] };
    return { turns: this.s.turnsFrom.all(episodeId, read.fromSeq, read.toSeq), earlierRoles: read.earlierRoles };
  }

  /** Memories still waiting for a vector, oldest first. */
  unembedded(limit: number, newestFirst = false): { rowid: number; content: string }[] {
    return (newestFirst ? this.s.unembeddedNewest : this.s.unembedded)(limit).all(this.namespaceId);
  }

  unembeddedCount(): number {
    return this.s.unembeddedCount.get(this.namespaceId)!.count;
  }

  memoryHistory(id: string, budgetBytes: number): HistoryRows | undefined {
    const found = this.s.historyRow.get(id, this.namespaceId);
    if (!found) return undefined;
    const { fact_attribute: attribute, ...row } = found;
    let chain: MemoryRow[] = [row];
    if (attribute !== null && row.entity_id !== null) {
      chain = [];
      // Read lazily: stop after the link whose content crosses the budget (raw bytes never exceed their JSON).
      let before = 0;
      for (const link of this.s.attributeChain.iterate(row.entity_id, attribute, row.occurred_at)) {
        if (before > budgetBytes) break; // `break` closes the iterator
        chain.push(link);
        before += Buffer.byteLength(link.content);
      }
    }
    return { row, chain, promotedFrom: this.s.promotedFrom.all(row.rowid) };
  }

  participants(episodeId: string): EntityRecord[] {
    return this.s.participants.all(episodeId);
  }
}
