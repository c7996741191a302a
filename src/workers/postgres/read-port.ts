// The read port over PostgreSQL: the same reads as sqlite/read-port.ts, one round trip each. A
// recall's snapshot is one REPEATABLE READ, READ ONLY transaction on one connection, so the IVF
// cells probed and the vectors scanned agree, as in SQLite's read transaction.
import type { EntityRecord, ListEpisodesResult, StatsResult, ValidatedListEntities, ValidatedListEpisodes } from '../../shared/schemas.js';
import type { VectorMove } from '../../shared/protocol/writer.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import { float32FromBlob } from '../../shared/meta.js';
import { storableText } from '../../shared/postgres-text.js';
import { nameCandidates } from '../port/entity-mentions.js';
import { cellFor } from '../ivf/cells.js';
import { trainIndex, trainingSample } from '../ivf/kmeans.js';
import { episodeSummaries, HISTORY_LINKS, type EpisodeListRow, type EpisodeRow, type HistoryRows, type MemoryRow } from '../port/rows.js';
import type { ReadPort, RecallReads, SnapshotOptions } from '../port/read-port.js';
import type { CandidateRow } from '../port/candidates.js';
import type { Sql, Tx } from './client.js';
import { candidateFilter } from './filter.js';
import { lexicalCandidates } from './lexical.js';
import { PostgresVectors } from './vectors.js';
import { ReadSource, type ReplicaOptions } from './replica.js';
import type { PrimaryCheck } from './primary-bound.js';
import { checkSnapshotRows, listSnapshotRows, readSnapshotRows, snapshotMemoryRows } from './snapshots.js';
import { decayCandidates, newestEpisodicRowid, promotionCandidates, promotionWatermark } from './consolidation.js';
import { listDeletion, listMemoryDeletion } from './deletion-snapshot.js';
import type { PrimaryWatch } from './primary-watch.js';
import { recentRead, type RecentTranscript, type TranscriptRow, type TurnSize } from '../port/recent-transcript.js';

export interface PostgresReadOptions {
  minSimilarity: number;
  vectorProbes?: number;
  /** Bytes of IVF cells each pool thread keeps between recalls (default 64 MB); only saves reading them again. */
  vectorCacheBytes?: number;
  /** Recall on replicas with read-your-writes (replica.ts); absent = every read on `sql`. */
  replica?: ReplicaOptions;
  /** The primary itself, when `sql` falls back to the replicas while it does not answer (primary-watch.ts); default `sql`. */
  primary?: Sql;
  /** Whether the primary answers (recall snapshots go to the replicas while it does not). */
  watch?: PrimaryWatch | null;
  /** Bounds recall snapshots on the primary (primary-bound.ts); absent: unbounded. */
  primaryCheck?: PrimaryCheck | null;
}

const MEMORY_COLUMNS = 'm.rowid, m.id, m.content, m.memory_type, m.confidence, m.stability, m.last_access_at, m.created_at, m.episode_id, m.seq, m.role, m.entity_id, m.extraction_tier, m.occurred_at, m.valid_until, m.superseded_by';

export class PostgresReadPort implements ReadPort {
  private readonly vectors: PostgresVectors;
  /** Where recall snapshots are read: the replica when it is fresh enough, else the primary. */
  readonly source: ReadSource;

  /** `sql`: the primary (target_session_attrs=primary); every read but recall snapshots goes there. */
  constructor(private readonly sql: Sql, private readonly namespaceId: number, readonly namespace: string, options: PostgresReadOptions) {
    this.vectors = new PostgresVectors(namespaceId, options.minSimilarity, options.vectorProbes, options.vectorCacheBytes);
    this.source = new ReadSource(options.primary ?? sql, options.replica ?? null, options.watch ?? null, options.primaryCheck ?? null);
  }

  async snapshot<T>(work: (reads: RecallReads) => Promise<T>, options: SnapshotOptions = {}): Promise<T> {
    return this.source.snapshot(options.after, (tx) => work(this.recallReads(tx)), options.onServed);
  }

  private recallReads(tx: Tx): RecallReads {
    const ns = this.namespaceId;
    return {
      entity: (name) => entity(tx, ns, name),
      entitiesNamedIn: (text) => entitiesNamedIn(tx, ns, text),
      lexical: (ctx) => lexicalCandidates(tx, ns, ctx),
      nearest: (ctx) => this.vectors.nearest(tx, ctx),
      similarities: (query, rowids) => this.vectors.similarities(tx, query, rowids),
      vectors: (rowids) => this.vectors.stored(tx, rowids),
      adjacent: async (rowids, filter, reach = 1) => rowids.length === 0 ? [] : (await tx<{ rowid: number }[]>`
        SELECT DISTINCT m.rowid FROM memories t JOIN memories m ON m.episode_id = t.episode_id
          AND m.seq BETWEEN t.seq - ${reach}::int AND t.seq + ${reach}::int AND m.seq <> t.seq
        WHERE t.rowid = ANY(${rowids}::bigint[]) AND t.memory_type = 'episodic' AND t.episode_id IS NOT NULL
          AND m.memory_type = 'episodic' AND ${candidateFilter(tx, ns, filter)}`).map((r) => r.rowid),
      membersOfFew: async (entityIds, depth, filter) => entityIds.length === 0 ? [] : (await tx<{ rowid: number }[]>`
        SELECT DISTINCT m.rowid FROM unnest(${entityIds}::text[]) AS s(entity_id)
        JOIN memory_entities e ON e.entity_id = s.entity_id JOIN memories m ON m.rowid = e.memory_rowid
        WHERE (SELECT count(*) FROM (SELECT DISTINCT x.memory_rowid FROM memory_entities x WHERE x.entity_id = s.entity_id LIMIT ${depth + 1}) c) <= ${depth}
          AND ${candidateFilter(tx, ns, filter)}
        LIMIT ${depth}`).map((r) => r.rowid),
      linked: async (rowids, entityIds) => rowids.length === 0 || entityIds.length === 0 ? new Set() : new Set((await tx<{ rowid: number }[]>`
        SELECT DISTINCT memory_rowid AS rowid FROM memory_entities
        WHERE memory_rowid = ANY(${rowids}::bigint[]) AND entity_id = ANY(${entityIds}::text[])`).map((r) => r.rowid)),
      about: async (rowids, entityIds) => rowids.length === 0 || entityIds.length === 0 ? new Set() : new Set((await tx<{ rowid: number }[]>`
        SELECT DISTINCT memory_rowid AS rowid FROM memory_entities
        WHERE memory_rowid = ANY(${rowids}::bigint[]) AND entity_id = ANY(${entityIds}::text[]) AND relation IN ('owner', 'mention')`).map((r) => r.rowid)),
      positions: async (rowids) => [...await tx<CandidateRow[]>`SELECT m.rowid, m.memory_type, m.episode_id, m.seq, m.confidence, m.created_at
        FROM memories m WHERE m.rowid = ANY(${rowids}::bigint[])`],
      rows: async (rowids) => [...await tx<MemoryRow[]>`SELECT ${tx.unsafe(MEMORY_COLUMNS)} FROM memories m WHERE m.rowid = ANY(${rowids}::bigint[])`],
    };
  }

  entity(name: string) { return entity(this.sql, this.namespaceId, name); }
  entitiesNamedIn(text: string) { return entitiesNamedIn(this.sql, this.namespaceId, text); }

  /** Rows while the content before them fits the budget (raw bytes never exceed their JSON), cut exactly by the caller. */
  async memoryHistory(id: string, budgetBytes: number): Promise<HistoryRows | undefined> {
    const [found] = await this.sql<(HistoryRows['row'] & { fact_attribute: string | null })[]>`SELECT ${this.sql.unsafe(MEMORY_COLUMNS)},
      m.access_count, m.decayed_at, m.archived, m.restored_at, m.fact_attribute FROM memories m WHERE m.id = ${id} AND m.namespace_id = ${this.namespaceId}`;
    if (!found) return undefined;
    const { fact_attribute: attribute, ...row } = found;
    const chain = attribute !== null && row.entity_id !== null
      ? [...await this.sql<MemoryRow[]>`SELECT rowid, id, content, memory_type, confidence, stability, last_access_at, created_at, episode_id, seq, role,
          entity_id, extraction_tier, occurred_at, valid_until, superseded_by
        FROM (SELECT ${this.sql.unsafe(MEMORY_COLUMNS)}, abs(m.occurred_at - ${row.occurred_at}) AS distance,
            sum(octet_length(m.content)) OVER (ORDER BY abs(m.occurred_at - ${row.occurred_at}), m.occurred_at, m.rowid) - octet_length(m.content) AS before
          FROM memories m WHERE m.entity_id = ${row.entity_id} AND m.fact_attribute = ${attribute} AND m.memory_type = 'semantic'
          ORDER BY distance, m.occurred_at, m.rowid LIMIT ${HISTORY_LINKS + 1}) r
        WHERE r.before <= ${budgetBytes} ORDER BY distance, occurred_at, rowid`]
      : [row];
    const promotedFrom = [...await this.sql<{ id: string; created_at: number }[]>`SELECT id, created_at FROM memories
      WHERE promoted_into = ${row.rowid} ORDER BY created_at DESC, rowid DESC LIMIT ${HISTORY_LINKS + 1}`];
    return { row, chain, promotedFrom };
  }

  async entityMemories(entityId: string, limit: number, budgetBytes: number, includeSuperseded = false): Promise<Iterable<MemoryRow>> {
    return this.sql<MemoryRow[]>`SELECT rowid, id, content, memory_type, confidence, stability, last_access_at, created_at, episode_id, seq, role, entity_id, extraction_tier,
        occurred_at, valid_until, superseded_by
      FROM (SELECT ${this.sql.unsafe(MEMORY_COLUMNS)}, sum(octet_length(m.content)) OVER (ORDER BY m.created_at DESC, m.rowid DESC) - octet_length(m.content) AS before
        FROM memories m
        WHERE m.rowid IN (SELECT memory_rowid FROM memory_entities WHERE entity_id = ${entityId} AND relation IN ('owner', 'participant'))
          AND m.archived = 0 ${includeSuperseded ? this.sql`` : this.sql`AND m.superseded_by IS NULL`}
        ORDER BY m.created_at DESC, m.rowid DESC LIMIT ${limit}) r
      WHERE r.before <= ${budgetBytes} ORDER BY created_at DESC, rowid DESC`;
  }

  async stats(): Promise<StatsResult> {
    const [row] = await this.sql<Omit<StatsResult, 'namespace'>[]>`SELECT
      (SELECT count(*) FROM entities WHERE namespace_id = ${this.namespaceId}) AS entities,
      count(*) FILTER (WHERE memory_type = 'episodic') AS episodic_memories,
      count(*) FILTER (WHERE memory_type = 'semantic') AS semantic_memories,
      count(*) FILTER (WHERE memory_type = 'procedural') AS procedural_memories
      FROM memories WHERE namespace_id = ${this.namespaceId} AND archived = 0`;
    return { namespace: this.namespace, ...row };
  }

  async entities({ q, limit = 50, offset = 0 }: ValidatedListEntities) {
    // No name holds U+0000 here, so no name contains a q that does (SQLite's answer too).
    if (q !== undefined && !storableText(q)) return { entities: [], total: 0 };
    // strpos over lower(): PostgreSQL's lower() folds beyond ASCII, as the SQLite adapter's fold().
    const match = q ? this.sql`AND strpos(lower(e.name), ${q.toLowerCase()}) > 0` : this.sql``;
    const rows = await this.sql<{ name: string; kind: EntityRecord['kind']; created_at: number; memory_count: number }[]>`
      SELECT e.name, e.kind, e.created_at, (SELECT count(*) FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid
        WHERE me.entity_id = e.id AND me.relation IN ('owner', 'participant') AND m.archived = 0) AS memory_count
      FROM entities e WHERE e.namespace_id = ${this.namespaceId} ${match}
      ORDER BY e.name COLLATE "C" LIMIT ${limit} OFFSET ${offset}`;
    const [{ total }] = await this.sql<{ total: number }[]>`SELECT count(*) AS total FROM entities e WHERE e.namespace_id = ${this.namespaceId} ${match}`;
    return { entities: rows.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() })), total };
  }

  /** As the SQLite store's: the namespace's episodes some entity still takes part in, newest started first. */
  async episodes({ entity, limit = 50, offset = 0 }: ValidatedListEpisodes): Promise<ListEpisodesResult> {
    let only = this.sql``;
    if (entity !== undefined) {
      const found = await this.entity(entity);
      if (!found) return { episodes: [], total: 0 };
      only = this.sql`AND ep.id IN (SELECT episode_id FROM episode_participants WHERE entity_id = ${found.id})`;
    }
    const listed = this.sql`ep.namespace_id = ${this.namespaceId} ${only} AND EXISTS (SELECT 1 FROM episode_participants p WHERE p.episode_id = ep.id)`;
    const rows = [...await this.sql<EpisodeListRow[]>`SELECT ep.id, ep.started_at, ep.ended_at, ep.outcome,
        (SELECT count(*) FROM memories m WHERE m.episode_id = ep.id AND m.seq IS NOT NULL)::integer AS message_count
      FROM episodes ep WHERE ${listed} ORDER BY ep.started_at DESC, ep.id DESC LIMIT ${limit} OFFSET ${offset}`];
    const [{ total }] = await this.sql<{ total: number }[]>`SELECT count(*)::integer AS total FROM episodes ep WHERE ${listed}`;
    const names = new Map<string, string[]>();
    if (rows.length > 0) {
      for (const { episode_id: id, name } of await this.sql<{ episode_id: string; name: string }[]>`SELECT p.episode_id, e.name
          FROM episode_participants p JOIN entities e ON e.id = p.entity_id
          WHERE p.episode_id = ANY(${rows.map((row) => row.id)}::text[]) ORDER BY p.episode_id, p.position`) {
        names.set(id, [...(names.get(id) ?? []), name]);
      }
    }
    return { episodes: episodeSummaries(rows, names), total };
  }

  async episode(id: string): Promise<EpisodeRow | undefined> {
    if (!storableText(id)) return undefined;
    const [row] = await this.sql<EpisodeRow[]>`SELECT id, started_at, last_activity_at, ended_at FROM episodes WHERE id = ${id} AND namespace_id = ${this.namespaceId}`;
    return row;
  }

  async episodeStarts(ids: string[]) {
    const keys = ids.filter(storableText);
    if (keys.length === 0) return new Map<string, number>();
    const rows = await this.sql<{ id: string; started_at: number }[]>`SELECT id, started_at FROM episodes WHERE id = ANY(${keys}::text[])`;
    return new Map(rows.map((row) => [row.id, row.started_at]));
  }

  async recentTranscript(episodeId: string, budgetChars: number): Promise<RecentTranscript> {
    if (!storableText(episodeId)) return { turns: [], earlierRoles: [] };
    // length() counts the characters in the database: no turn's text is sent for it.
    const sizes = [...await this.sql<TurnSize[]>`SELECT seq, role, length(content) AS chars FROM memories
      WHERE episode_id = ${episodeId} AND memory_type = 'episodic' ORDER BY seq`];
    const read = recentRead(sizes, budgetChars);
    if (!read) return { turns: [], earlierRoles: [] };
    const turns = [...await this.sql<TranscriptRow[]>`SELECT id, role, content FROM memories
      WHERE episode_id = ${episodeId} AND memory_type = 'episodic' AND seq BETWEEN ${read.fromSeq} AND ${read.toSeq}
      ORDER BY seq`];
    return { turns, earlierRoles: read.earlierRoles };
  }

  async participants(episodeId: string) {
    if (!storableText(episodeId)) return [];
    return [...await this.sql<EntityRecord[]>`SELECT e.id, e.name, e.kind FROM episode_participants p
      JOIN entities e ON e.id = p.entity_id WHERE p.episode_id = ${episodeId} ORDER BY p.position`];
  }

  async unembedded(limit: number, newestFirst = false) {
    return [...await this.sql<{ rowid: number; content: string }[]>`SELECT rowid, content FROM memories
      WHERE namespace_id = ${this.namespaceId} AND embedded = 0 ORDER BY rowid ${newestFirst ? this.sql`DESC` : this.sql``} LIMIT ${limit}`];
  }

  async unembeddedCount() {
    const [{ count }] = await this.sql<{ count: number }[]>`SELECT count(*) AS count FROM memories WHERE namespace_id = ${this.namespaceId} AND embedded = 0`;
    return count;
  }

  async cellFor(vector: Float32Array) {
    return this.sql.begin('READ ONLY', async (tx) => cellFor((await this.vectors.cellIndex(tx)).at(-1) ?? null, vector));
  }

  async vectorIndexStatus() {
    const generations = await this.sql.begin('READ ONLY', (tx) => this.vectors.cellIndex(tx));
    const newest = generations.at(-1);
    const [{ vectors, stale }] = await this.sql<{ vectors: number; stale: number }[]>`SELECT count(*) AS vectors,
      count(*) FILTER (WHERE vector_cell < ${newest?.cells[0] ?? 0}) AS stale
      FROM memories WHERE namespace_id = ${this.namespaceId} AND embedded = 1`;
    return { vectors, stale: newest ? stale : 0, generations: generations.length, trainedOn: newest?.trainedOn ?? null, cells: newest?.centroids.count ?? 0 };
  }

  /** As the SQLite path (sqlite/ivf-upkeep.ts): the same deterministic sample, its vectors read in one query. */
  async trainVectorIndex() {
    const rowids = (await this.sql<{ rowid: number }[]>`SELECT rowid FROM memories
      WHERE namespace_id = ${this.namespaceId} AND embedded = 1 ORDER BY rowid`).map((r) => r.rowid);
    const picks = trainingSample(rowids);
    const vectors = new Map((await this.sql<{ rowid: number; embedding: Buffer }[]>`SELECT rowid, embedding FROM memory_vectors
      WHERE rowid = ANY(${picks}::bigint[])`).map((r) => [r.rowid, float32FromBlob(r.embedding)]));
    return trainIndex(rowids, (rowid) => vectors.get(rowid) ?? null);
  }

  async staleVectorMoves(limit: number): Promise<VectorMove[]> {
    const generations = await this.sql.begin('READ ONLY', (tx) => this.vectors.cellIndex(tx));
    const newest = generations.at(-1);
    if (!newest) return [];
    const rows = await this.sql<{ rowid: number; embedding: Buffer | null }[]>`SELECT m.rowid, v.embedding FROM memories m
      LEFT JOIN memory_vectors v ON v.rowid = m.rowid
      WHERE m.namespace_id = ${this.namespaceId} AND m.embedded = 1 AND m.vector_cell < ${newest.cells[0]} LIMIT ${limit}`;
    return rows.map((row) => ({ rowid: row.rowid, cell: row.embedding ? cellFor(newest, float32FromBlob(row.embedding)) : UNASSIGNED_CELL }));
  }

  promotionWatermark() { return promotionWatermark(this.sql, this.namespaceId); }
  newestEpisodicRowid() { return newestEpisodicRowid(this.sql, this.namespaceId); }
  promotionCandidates(watermark: number, perSubject: number) { return promotionCandidates(this.sql, this.namespaceId, watermark, perSubject); }
  decayCandidates(now: number, archiveFactor: number) { return decayCandidates(this.sql, this.namespaceId, now, archiveFactor); }

  listSnapshots() { return listSnapshotRows(this.sql, this.namespaceId, this.namespace); }
  readSnapshot(snapshotId: string) { return readSnapshotRows(this.sql, this.namespaceId, this.namespace, snapshotId); }
  checkSnapshot(snapshotId: string) { return checkSnapshotRows(this.sql, this.namespaceId, this.namespace, snapshotId); }
  snapshotMemories(snapshotId: string, after: number) { return snapshotMemoryRows(this.sql, this.namespaceId, this.namespace, snapshotId, after); }
  /** Lists the rows only: the writer copies each into the snapshot tables as it deletes it. */
  snapshotEntity(entityName: string, maxRowid: number) { return listDeletion(this.sql, this.namespaceId, this.namespace, entityName, maxRowid); }
  snapshotMemory(memoryId: string) { return listMemoryDeletion(this.sql, this.namespaceId, this.namespace, memoryId); }
}

async function entity(sql: Sql | Tx, namespaceId: number, name: string): Promise<EntityRecord | undefined> {
  if (!storableText(name)) return undefined;
  const [row] = await sql<EntityRecord[]>`SELECT id, name, kind FROM entities WHERE namespace_id = ${namespaceId} AND name = ${name}`;
  return row;
}

/** As EntityMatcher: 1–4 word spans of the text, matched against lower-cased names. */
async function entitiesNamedIn(sql: Sql | Tx, namespaceId: number, text: string): Promise<string[]> {
  // A gram holding U+0000 (the whole text is one) names no entity here.
  const grams = nameCandidates(text).filter(storableText);
  if (grams.length === 0) return [];
  return (await sql<{ id: string }[]>`SELECT id FROM entities WHERE namespace_id = ${namespaceId} AND lower(name) = ANY(${grams}::text[])`).map((r) => r.id);
}
