// The PostgreSQL adapter of the row port (../commands/rows.ts): each operation yields its query
// (run in the flush's transaction or the command's savepoint) and hands its rows back to the
// rule. One instance per command, over that command's transaction; what outlives a command
// (the entity cache, the restored rows' column list) is in PgRowState.
import { fail } from '../../shared/errors.js';
import type { SnapshotHeaderT } from '../../shared/file-formats.js';
import { blobOf, vectorFromBlob } from '../../shared/meta.js';
import type { EntityRecord, MemoryType } from '../../shared/schemas.js';
import { UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import type { DecayUpdate, EpisodeState, Generation, Hold, IdTable, MemoryInsert, MemoryRow, Removed, ReviewState, Step, TimelineFact, TimelinePages, WriteRows } from '../commands/rows.js';
import type { Tx } from './connect.js';
import type { DuplicateAhead } from './read-ahead.js';
import type { PgRowState } from './row-state.js';

/** Rows copied and deleted per statement round. */
const ROUND_ROWS = 250;
/** Columns the restore never copies: this database's own (identity, generated, vector state). */
const OWN_COLUMNS = new Set(['rowid', 'search', 'vector_cell', 'embedded']);


/** One query, its rows handed back to the rule by the driver (commands/run.ts runAwaiting). */
function* query<T>(pending: PromiseLike<T>): Step<T> {
  return (yield pending) as T;
}

export class PgRows implements WriteRows {
  readonly removeRound = ROUND_ROWS;
  readonly snapshotsInDatabase = true;
  private readonly ns: number;
  /** Memories this command inserted less those it deleted, in its namespace (document-counts.ts). */
  documentsAdded = 0;

  /** `ahead`: this command's duplicate check, read with the flush's others (read-ahead.ts). */
  constructor(private readonly tx: Tx, private readonly state: PgRowState, private ahead?: DuplicateAhead) {
    this.ns = state.namespaceId;
  }

  /** The answer read ahead, once, when the rule asks exactly what was read. */
  private takeAhead(ownerId: string, key: string, type: MemoryType, aboveRowid: number): DuplicateAhead | undefined {
    const ahead = this.ahead;
    if (!ahead || type !== 'semantic' || ahead.ownerId !== ownerId || ahead.key !== key || ahead.aboveRowid !== aboveRowid) return undefined;
    this.ahead = undefined;
    return ahead;
  }

  /** The cache first: entities are never changed or deleted once created (see PgRowState). */
  *entityByName(name: string, fresh = false): Step<EntityRecord | undefined> {
    const cached = fresh ? undefined : this.state.cachedEntity(name);
    if (cached) return cached;
    const [found] = yield* query(this.tx<EntityRecord[]>`SELECT id, name, kind FROM entities WHERE namespace_id = ${this.ns} AND name = ${name}`);
    if (found) this.state.metEntity(found);
    else if (fresh) this.state.dropEntity(name);
    return found;
  }

  /** ON CONFLICT keeps it one row per name even outside the namespace lock (another node). */
  *insertEntity(entity: EntityRecord, createdAt: number): Step<EntityRecord> {
    const tx = this.tx;
    const [created] = yield* query(tx<EntityRecord[]>`INSERT INTO entities (id, namespace_id, name, kind, created_at)
      VALUES (${entity.id}, ${this.ns}, ${entity.name}, ${entity.kind}, ${createdAt})
      ON CONFLICT (namespace_id, name) DO NOTHING RETURNING id, name, kind`);
    const stored = created ?? (yield* query(tx<EntityRecord[]>`SELECT id, name, kind FROM entities WHERE namespace_id = ${this.ns} AND name = ${entity.name}`))[0]!;
    this.state.metEntity(stored);
    return stored;
  }

  /** md5(content_key) is what memories_by_entity indexes (migration 3); the text comparison decides. */
  *ownedDuplicate(ownerId: string, key: string, type: MemoryType, aboveRowid: number): Step<MemoryRow | undefined> {
    const ahead = this.takeAhead(ownerId, key, type, aboveRowid);
    if (ahead) return ahead.found;
    // A current one first: the same words superseded earlier are history (remember.ts).
    const [row] = yield* query(this.tx<MemoryRow[]>`SELECT rowid, id, memory_type, content, confidence, stability, extraction_tier,
        occurred_at, valid_until, superseded_by
      FROM memories WHERE entity_id = ${ownerId} AND md5(content_key) = md5(${key}) AND content_key = ${key} AND memory_type = ${type}
        AND archived = 0 AND rowid > ${aboveRowid} ORDER BY valid_until IS NOT NULL, rowid LIMIT 1`);
    return row;
  }

  /**
   * The three reads of ownedDuplicate, factsAfter and factsValidAt (offset 0) as one statement,
   * each part with its own WHERE, ORDER BY and LIMIT as there (so each keeps its index); `part`
   * says which read a row answers, and the outer ORDER BY puts each part's rows in its read's order.
   * With the duplicate read ahead, its part is switched off (a one-time filter: not run).
   */
  *ownedDuplicateWithTimeline(ownerId: string, key: string, type: MemoryType, aboveRowid: number,
    attribute: string, at: number, limit: number): Step<{ duplicate: MemoryRow | undefined; timeline: TimelinePages }> {
    const ahead = this.takeAhead(ownerId, key, type, aboveRowid);
    const rows = yield* query(this.tx<(MemoryRow & { part: number })[]>`SELECT * FROM (
      (SELECT 0 AS part, rowid, id, memory_type, content, confidence, stability, extraction_tier,
          occurred_at, valid_until, superseded_by
        FROM memories WHERE ${ahead === undefined}::boolean AND entity_id = ${ownerId} AND md5(content_key) = md5(${key}) AND content_key = ${key}
          AND memory_type = ${type} AND archived = 0 AND rowid > ${aboveRowid} ORDER BY valid_until IS NOT NULL, rowid LIMIT 1)
      UNION ALL
      (SELECT 1, rowid, id, NULL, content, NULL, NULL, NULL, occurred_at, valid_until, NULL
        FROM memories WHERE entity_id = ${ownerId} AND fact_attribute = ${attribute} AND occurred_at > ${at} AND memory_type = 'semantic' AND archived = 0
        ORDER BY occurred_at, rowid LIMIT ${limit})
      UNION ALL
      (SELECT 2, rowid, id, NULL, content, NULL, NULL, NULL, occurred_at, valid_until, NULL
        FROM memories WHERE entity_id = ${ownerId} AND fact_attribute = ${attribute} AND occurred_at < ${at}
          AND (valid_until IS NULL OR valid_until > ${at}) AND memory_type = 'semantic' AND archived = 0
        ORDER BY rowid LIMIT ${limit})
      ) reads ORDER BY part, CASE WHEN part = 1 THEN occurred_at END, rowid`);
    let duplicate = ahead?.found;
    const timeline: TimelinePages = { after: [], validAt: [] };
    for (const row of rows) {
      if (row.part === 0) {
        duplicate = { rowid: row.rowid, id: row.id, memory_type: row.memory_type, content: row.content, confidence: row.confidence,
          stability: row.stability, extraction_tier: row.extraction_tier, occurred_at: row.occurred_at,
          valid_until: row.valid_until, superseded_by: row.superseded_by };
      } else {
        const fact: TimelineFact = { rowid: row.rowid, id: row.id, content: row.content, occurred_at: row.occurred_at, valid_until: row.valid_until };
        (row.part === 1 ? timeline.after : timeline.validAt).push(fact);
      }
    }
    return { duplicate, timeline };
  }

  *raiseConfidence(rowid: number, confidence: number, at: number): Step<void> {
    yield* query(this.tx`UPDATE memories SET confidence = greatest(confidence, ${confidence}), last_access_at = ${at} WHERE rowid = ${rowid}`);
  }

  /** The row, its entity links and the facts it supersedes in one statement (one round trip). */
  *insertMemory(m: MemoryInsert): Step<number> {
    // Other rows than the inserted one: one statement may change both (no row is changed twice).
    const superseded = m.supersedes && m.supersedes.length > 0
      ? this.tx`, superseded AS (UPDATE memories SET valid_until = ${m.occurredAt}, superseded_by = ${m.id}
          WHERE rowid = ANY(${m.supersedes.map((fact) => fact.rowid)}::bigint[]))`
      : this.tx``;
    const [inserted] = yield* query(this.tx<{ rowid: number }[]>`WITH m AS (INSERT INTO memories
        (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
         last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role, context,
         occurred_at, valid_until, superseded_by, fact_attribute)
      VALUES (${m.id}, ${this.ns}, ${m.type}, ${m.content}, ${m.contentKey},
        ${m.confidence}, ${m.stability}, ${m.difficulty}, ${m.at}, ${m.at}, ${m.tier},
        ${m.ownerId}, ${m.episodeId}, ${m.seq}, ${m.role}, ${m.context},
        ${m.occurredAt}, ${m.validUntil}, ${m.supersededBy}, ${m.factAttribute})
      ON CONFLICT (id) DO NOTHING RETURNING rowid),
      links AS (INSERT INTO memory_entities (memory_rowid, entity_id, relation)
        SELECT m.rowid, l.entity_id, l.relation FROM m,
          unnest(${m.links.map((l) => l.entityId)}::text[], ${m.links.map((l) => l.relation)}::text[]) AS l(entity_id, relation)
        ON CONFLICT DO NOTHING)${superseded}
      SELECT rowid FROM m`);
    if (inserted) this.documentsAdded++;
    return inserted!.rowid;
  }

  *factsAfter(ownerId: string, attribute: string, at: number, offset: number, limit: number): Step<TimelineFact[]> {
    return yield* query(this.tx<TimelineFact[]>`SELECT rowid, id, content, occurred_at, valid_until FROM memories
      WHERE entity_id = ${ownerId} AND fact_attribute = ${attribute} AND occurred_at > ${at} AND memory_type = 'semantic' AND archived = 0
      ORDER BY occurred_at, rowid LIMIT ${limit} OFFSET ${offset}`);
  }

  // One read whatever `manyLater` says: memories_by_fact_attribute (migration 13 says why
  // PostgreSQL has no validity index).
  *factsValidAt(ownerId: string, attribute: string, at: number, offset: number, limit: number): Step<TimelineFact[]> {
    return yield* query(this.tx<TimelineFact[]>`SELECT rowid, id, content, occurred_at, valid_until FROM memories
      WHERE entity_id = ${ownerId} AND fact_attribute = ${attribute} AND occurred_at < ${at}
        AND (valid_until IS NULL OR valid_until > ${at}) AND memory_type = 'semantic' AND archived = 0
      ORDER BY rowid LIMIT ${limit} OFFSET ${offset}`);
  }

  *supersede(rowid: number, at: number, by: string): Step<void> {
    yield* query(this.tx`UPDATE memories SET valid_until = ${at}, superseded_by = ${by} WHERE rowid = ${rowid}`);
  }

  *turnContent(episodeId: string, seq: number): Step<string | undefined> {
    const [turn] = yield* query(this.tx<{ content: string }[]>`SELECT content FROM memories
      WHERE episode_id = ${episodeId} AND seq = ${seq} AND memory_type = 'episodic'`);
    return turn?.content;
  }

  *countIds(ids: string[]): Step<number> {
    const [row] = yield* query(this.tx<{ n: number }[]>`SELECT count(*)::int AS n FROM memories WHERE id = ANY(${ids}::text[])`);
    return row!.n;
  }

  *maxRowid(): Step<number> {
    const [row] = yield* query(this.tx<{ n: number }[]>`SELECT coalesce(max(rowid), 0) AS n FROM memories`);
    return row!.n;
  }

  *sourcesHeld(ids: string[], hold: Hold): Step<boolean> {
    const [hit] = yield* query(this.tx`SELECT 1 FROM memories m JOIN memory_entities me ON me.memory_rowid = m.rowid
      WHERE m.id = ANY(${ids}::text[]) AND m.rowid <= ${hold.maxRowid}
        AND me.entity_id = ${hold.entityId} AND me.relation IN ('owner', 'participant') LIMIT 1`);
    return hit !== undefined;
  }

  *rowsHeld(rowids: number[], hold: Hold): Step<boolean> {
    const [hit] = yield* query(this.tx`SELECT 1 FROM memory_entities WHERE memory_rowid = ANY(${rowids}::bigint[])
      AND memory_rowid <= ${hold.maxRowid} AND entity_id = ${hold.entityId} AND relation IN ('owner', 'participant') LIMIT 1`);
    return hit !== undefined;
  }

  *reviewStates(rowids: number[]): Step<ReviewState[]> {
    return yield* query(this.tx<ReviewState[]>`SELECT rowid, stability, difficulty, last_access_at FROM memories
      WHERE rowid = ANY(${rowids}::bigint[]) AND archived = 0`);
  }

  *review(rowid: number, stability: number, lastAccessAt: number): Step<void> {
    yield* query(this.tx`UPDATE memories SET stability = ${stability}, last_access_at = ${lastAccessAt},
      access_count = access_count + 1 WHERE rowid = ${rowid}`);
  }

  /** Only the same owner's facts of the same attribute can point at it (supersession.ts): the index finds them. */
  *reinstateSupersededBy(rowid: number, id: string): Step<void> {
    yield* query(this.tx`UPDATE memories m SET valid_until = x.valid_until, superseded_by = x.superseded_by
      FROM memories x WHERE x.rowid = ${rowid} AND x.id = ${id} AND x.namespace_id = ${this.ns} AND x.fact_attribute IS NOT NULL
        AND m.entity_id = x.entity_id AND m.fact_attribute = x.fact_attribute AND m.superseded_by = x.id`);
  }

  /**
   * The snapshot is not a file here: the rows still there are copied — every column, their links
   * and vectors, in the snapshot file's memory shape — into deletion_snapshot_memories in the
   * transaction that deletes them, so a row is never gone without its copy, and both replicate.
   */
  *removeMemories(rows: [number, string][], snapshot: SnapshotHeaderT | undefined): Step<Removed[]> {
    // Without its snapshot a delete could not be undone: refuse rather than delete.
    if (!snapshot) throw fail.internal();
    const tx = this.tx;
    const found = yield* query(tx<Record<string, unknown>[]>`SELECT to_jsonb(m) - 'search' AS memory, v.embedding,
        coalesce((SELECT jsonb_agg(jsonb_build_object('entity_id', me.entity_id, 'relation', me.relation))
          FROM memory_entities me WHERE me.memory_rowid = m.rowid), '[]'::jsonb) AS links
      FROM memories m LEFT JOIN memory_vectors v ON v.rowid = m.rowid
      WHERE (m.rowid, m.id) IN (SELECT * FROM unnest(${rows.map((r) => r[0])}::bigint[], ${rows.map((r) => r[1])}::text[]))
        AND m.namespace_id = ${this.ns}
      FOR UPDATE OF m`);
    // Rows gone already (another delete took them) leave nothing: a snapshot header is written
    // with the first row it holds, so a delete that removes nothing leaves no empty snapshot.
    if (found.length === 0) return [];
    yield* query(tx`INSERT INTO deletion_snapshots (snapshot_id, namespace_id, captured_at, entity, embedder)
      VALUES (${snapshot.snapshot_id}, ${this.ns}, ${snapshot.captured_at}, ${tx.json(snapshot.entity)}, ${snapshot.embedder})
      ON CONFLICT (snapshot_id) DO NOTHING`);
    const copies = found.map((row) => {
      const memory = row.memory as Record<string, unknown>;
      const embedding = row.embedding as Buffer | null;
      return {
        snapshot_id: snapshot.snapshot_id,
        memory_rowid: memory.rowid as number,
        memory: tx.json({ ...memory, links: row.links, embedding: embedding ? vectorFromBlob(embedding) : null } as never),
      };
    });
    yield* query(tx`INSERT INTO deletion_snapshot_memories ${tx(copies)} ON CONFLICT DO NOTHING`);
    const removed = yield* query(tx<Removed[]>`DELETE FROM memories
      WHERE rowid = ANY(${copies.map((c) => c.memory_rowid)}::bigint[]) RETURNING episode_id, seq, memory_type`);
    this.documentsAdded -= removed.length;
    return removed;
  }

  *entityHasMemories(entityId: string): Step<boolean> {
    const [hit] = yield* query(this.tx`SELECT 1 WHERE EXISTS (SELECT 1 FROM memories WHERE entity_id = ${entityId})
      OR EXISTS (SELECT 1 FROM memory_entities WHERE entity_id = ${entityId} AND relation IN ('owner', 'participant'))`);
    return hit !== undefined;
  }

  *removeEntity(entityId: string): Step<boolean> {
    const tx = this.tx;
    yield* query(tx`DELETE FROM memory_entities WHERE entity_id = ${entityId}`);
    yield* query(tx`DELETE FROM episode_participants WHERE entity_id = ${entityId}`);
    const gone = yield* query(tx<{ name: string }[]>`DELETE FROM entities WHERE id = ${entityId} AND namespace_id = ${this.ns} RETURNING name`);
    // This node's cache must not hand the name's old id to the next write (other nodes' caches
    // heal on the foreign-key violation such a write meets: adapter.ts).
    for (const { name } of gone) this.state.dropEntity(name);
    return gone.length > 0;
  }

  *clearContext(turns: { episodeId: string; seq: number }[]): Step<void> {
    yield* query(this.tx`UPDATE memories SET context = '' FROM unnest(${turns.map((t) => t.episodeId)}::text[], ${turns.map((t) => t.seq)}::int[]) AS n(episode_id, seq)
      WHERE memories.episode_id = n.episode_id AND memories.seq = n.seq AND memories.memory_type = 'episodic' AND memories.context != ''`);
  }

  *insertEpisode(id: string, at: number, startedAt: number): Step<void> {
    yield* query(this.tx`INSERT INTO episodes (id, namespace_id, started_at, last_activity_at) VALUES (${id}, ${this.ns}, ${startedAt}, ${at})
      ON CONFLICT (id) DO NOTHING`);
  }

  *insertParticipant(episodeId: string, entityId: string, position: number): Step<void> {
    yield* query(this.tx`INSERT INTO episode_participants (episode_id, entity_id, position) VALUES (${episodeId}, ${entityId}, ${position})
      ON CONFLICT DO NOTHING`);
  }

  *episode(id: string): Step<EpisodeState | undefined> {
    const [row] = yield* query(this.tx<EpisodeState[]>`SELECT started_at, last_activity_at, ended_at, message_count FROM episodes
      WHERE id = ${id} AND namespace_id = ${this.ns}`);
    return row;
  }

  *participants(episodeId: string): Step<string[]> {
    const rows = yield* query(this.tx<{ entity_id: string }[]>`SELECT entity_id FROM episode_participants
      WHERE episode_id = ${episodeId} ORDER BY position`);
    return rows.map((r) => r.entity_id);
  }

  *touchEpisode(id: string, at: number): Step<void> {
    yield* query(this.tx`UPDATE episodes SET last_activity_at = ${at}, message_count = message_count + 1 WHERE id = ${id}`);
  }

  *endEpisode(id: string, at: number, outcome: string | null): Step<void> {
    yield* query(this.tx`UPDATE episodes SET ended_at = ${at}, outcome = ${outcome} WHERE id = ${id}`);
  }

  *countPromotable(rowids: number[]): Step<number> {
    const [row] = yield* query(this.tx<{ n: number }[]>`SELECT count(*)::int AS n FROM memories WHERE rowid = ANY(${rowids}::bigint[])
      AND memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL`);
    return row!.n;
  }

  *markPromoted(rowids: number[], into: number): Step<void> {
    yield* query(this.tx`UPDATE memories SET promoted_into = ${into} WHERE rowid = ANY(${rowids}::bigint[])`);
  }

  *decay(u: DecayUpdate): Step<boolean> {
    const changed = yield* query(this.tx`UPDATE memories SET stability = ${u.stability}, difficulty = ${u.difficulty},
        decayed_at = CASE WHEN ${u.decayed} THEN ${u.at}::bigint ELSE decayed_at END, archived = ${u.archive ? 1 : 0}
      WHERE rowid = ${u.rowid} AND archived = 0 AND last_access_at = ${u.lastAccessAt}`);
    return changed.count > 0;
  }

  *setMeta(key: string, value: string): Step<void> {
    yield* query(this.tx`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
  }

  *unembedded(rowid: number): Step<number | undefined> {
    const [row] = yield* query(this.tx<{ namespace_id: number }[]>`SELECT namespace_id FROM memories WHERE rowid = ${rowid} AND embedded = 0 FOR UPDATE`);
    return row?.namespace_id;
  }

  *putVector(rowid: number, namespaceId: number, cell: number, vector: Float32Array): Step<void> {
    // SQLite's vec0 column refuses another length, failing the command: so does this.
    const { dimensions } = this.state;
    if (vector.length !== dimensions) throw new RangeError(`vector of ${vector.length} dimensions; the store holds ${dimensions}`);
    yield* query(this.tx`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
      VALUES (${rowid}, ${namespaceId}, ${cell}, ${blobOf(vector)})
      ON CONFLICT (rowid) DO UPDATE SET cell = excluded.cell, embedding = excluded.embedding`);
  }

  *markEmbedded(rowid: number, cell: number): Step<void> {
    yield* query(this.tx`UPDATE memories SET embedded = 1, vector_cell = ${cell} WHERE rowid = ${rowid}`);
  }

  *linkMentions(rowid: number, entityIds: string[]): Step<void> {
    // The pool found the names before the writer runs: an entity forgotten in between is skipped.
    yield* query(this.tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation)
      SELECT ${rowid}, e.id, 'mention' FROM entities e WHERE e.id = ANY(${entityIds}::text[]) ON CONFLICT DO NOTHING`);
  }

  *markUnembeddable(rowids: number[]): Step<void> {
    yield* query(this.tx`UPDATE memories SET embedded = -1 WHERE rowid = ANY(${rowids}::bigint[]) AND embedded = 0`);
  }

  *newestGeneration(namespaceId: number): Step<Generation | undefined> {
    const [row] = yield* query(this.tx<Generation[]>`
      SELECT g.generation, (SELECT min(cell) FROM vector_cells c WHERE c.generation = g.generation) AS first
      FROM vector_generations g WHERE g.namespace_id = ${namespaceId} ORDER BY g.generation DESC LIMIT 1`);
    return row;
  }

  *isCellOf(cell: number, generation: number): Step<boolean> {
    const [row] = yield* query(this.tx`SELECT 1 FROM vector_cells WHERE cell = ${cell} AND generation = ${generation}`);
    return row !== undefined;
  }

  *insertGeneration(trainedOn: number, at: number): Step<number> {
    const [created] = yield* query(this.tx<{ generation: number }[]>`INSERT INTO vector_generations (namespace_id, trained_on, created_at)
      VALUES (${this.ns}, ${trainedOn}, ${at}) RETURNING generation`);
    return created!.generation;
  }

  *insertCell(generation: number, centroid: Float32Array): Step<void> {
    yield* query(this.tx`INSERT INTO vector_cells (generation, centroid) VALUES (${generation}, ${blobOf(centroid)})`);
  }

  *placement(rowid: number): Step<{ vector_cell: number; has_vector: boolean } | undefined> {
    const [row] = yield* query(this.tx<{ vector_cell: number; has_vector: boolean }[]>`SELECT m.vector_cell, v.rowid IS NOT NULL AS has_vector
      FROM memories m LEFT JOIN memory_vectors v ON v.rowid = m.rowid
      WHERE m.rowid = ${rowid} AND m.namespace_id = ${this.ns} AND m.embedded = 1`);
    return row;
  }

  *moveVector(rowid: number, cell: number): Step<void> {
    yield* query(this.tx`UPDATE memory_vectors SET cell = ${cell} WHERE rowid = ${rowid}`);
    yield* query(this.tx`UPDATE memories SET vector_cell = ${cell} WHERE rowid = ${rowid}`);
  }

  *unembed(rowid: number): Step<void> {
    yield* query(this.tx`UPDATE memories SET embedded = 0, vector_cell = ${UNASSIGNED_CELL} WHERE rowid = ${rowid}`);
  }

  *olderCellsInUse(first: number): Step<boolean> {
    const [row] = yield* query(this.tx`SELECT 1 FROM memories WHERE namespace_id = ${this.ns} AND embedded = 1
      AND vector_cell > 0 AND vector_cell < ${first} LIMIT 1`);
    return row !== undefined;
  }

  /** Cells go with their generation (ON DELETE CASCADE). */
  *retireGenerationsBelow(generation: number): Step<number> {
    const retired = yield* query(this.tx`DELETE FROM vector_generations WHERE namespace_id = ${this.ns} AND generation < ${generation}`);
    return retired.count;
  }

  // ------------------------------------------------------------------ restore (commands/restore.ts)

  *holderOf(table: IdTable, id: string): Step<{ here: boolean; namespace: string } | undefined> {
    const tx = this.tx;
    const [holder] = yield* query(tx<{ ns: number; name: string }[]>`SELECT t.namespace_id AS ns, n.name FROM ${tx(table)} t
      JOIN namespaces n ON n.id = t.namespace_id WHERE t.id = ${id}`);
    return holder && { here: holder.ns === this.ns, namespace: holder.name };
  }

  *insertVerbatim(row: Record<string, unknown>): Step<number | null> {
    const tx = this.tx;
    const values: Record<string, unknown> = { ...row, namespace_id: this.ns };
    const columns = (yield* this.columns()).filter((c) => c in values);
    const [inserted] = yield* query(tx<{ rowid: number }[]>`INSERT INTO memories ${tx(values as Record<string, never>, columns)}
      ON CONFLICT (id) DO NOTHING RETURNING rowid`);
    if (inserted) this.documentsAdded++;
    return inserted?.rowid ?? null;
  }

  *insertLink(rowid: number, entityId: string, relation: string): Step<void> {
    yield* query(this.tx`INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (${rowid}, ${entityId}, ${relation})
      ON CONFLICT DO NOTHING`);
  }

  /** Unlike SQLite's vec0 table, this store's vector table exists from the start: a vector fits unless meta says otherwise. */
  *restoreVector(rowid: number, embedding: number[], embedder: string | null): Step<boolean> {
    const space = this.vectorSpace ??= yield* this.readVectorSpace();
    const fits = (space.dimensions === null || embedding.length === space.dimensions)
      && (space.embedder === null || embedder === null || space.embedder === embedder);
    if (!fits) return false;
    yield* query(this.tx`INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding)
      VALUES (${rowid}, ${this.ns}, ${UNASSIGNED_CELL}, ${Buffer.from(new Float32Array(embedding).buffer)})`);
    yield* query(this.tx`UPDATE memories SET embedded = 1, vector_cell = ${UNASSIGNED_CELL} WHERE rowid = ${rowid}`);
    return true;
  }

  /** The entity's episode participations, for the episodes this namespace holds (every chunk: idempotent). */
  *putParticipations(entityId: string, episodes: [string, number][]): Step<void> {
    if (episodes.length === 0) return;
    yield* query(this.tx`INSERT INTO episode_participants (episode_id, entity_id, position)
      SELECT p.episode_id, ${entityId}, p.position FROM unnest(${episodes.map((e) => e[0])}::text[], ${episodes.map((e) => e[1])}::int[]) AS p(episode_id, position)
      WHERE EXISTS (SELECT 1 FROM episodes WHERE id = p.episode_id AND namespace_id = ${this.ns})
      ON CONFLICT DO NOTHING`);
  }

  /** Read once a command (this instance lives for one). */
  private vectorSpace?: { dimensions: number | null; embedder: string | null };

  private *readVectorSpace(): Step<{ dimensions: number | null; embedder: string | null }> {
    const meta = new Map((yield* query(this.tx<{ key: string; value: string }[]>`SELECT key, value FROM meta
      WHERE key IN ('embedder', 'embedding_dimensions')`)).map((r) => [r.key, r.value]));
    const dims = meta.get('embedding_dimensions');
    return { dimensions: dims === undefined ? null : Number(dims), embedder: meta.get('embedder') ?? null };
  }

  private *columns(): Step<string[]> {
    this.state.memoryColumns ??= (yield* query(this.tx<{ column_name: string }[]>`SELECT column_name FROM information_schema.columns
      WHERE table_name = 'memories' AND table_schema = current_schema()`)).map((c) => c.column_name).filter((c) => !OWN_COLUMNS.has(c));
    return this.state.memoryColumns;
  }
}
