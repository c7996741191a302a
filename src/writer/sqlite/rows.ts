// The SQLite adapter of the row port (../commands/rows.ts): prepared statements, made once, run
// synchronously. Every operation returns without suspending, so a rule runs straight through
// inside the flush's BEGIN IMMEDIATE transaction.
import type { Db } from '../../shared/db.js';
import { onConnection } from '../../shared/connection-statements.js';
import type { SnapshotHeaderT } from '../../shared/file-formats.js';
import { blobOf } from '../../shared/meta.js';
import { statementPerLimits, statementPerValues } from '../../shared/literal-statements.js';
import { MEMORY_TYPES, type EntityRecord, type MemoryType } from '../../shared/schemas.js';
import { INSERT_VECTOR_SQL, TURN_CONTENT_SQL, UNASSIGNED_CELL, vectorCellSql } from '../../shared/sql-schema.js';
import type { SupersededCursor } from '../../shared/protocol/writer.js';
import type { DecayUpdate, EpisodeState, Generation, Hold, IdTable, MemoryInsert, MemoryRow, Removed, ReviewState, Step, TimelineFact, WriteRows } from '../commands/rows.js';
import { RowWriter } from './row-writer.js';
import { VectorRows } from './vector-rows.js';
import { nextVectorSeq } from './vector-seq.js';

/** A memory type as SQL text, checked against the closed set. */
function memoryTypeLiteral(type: MemoryType): string {
  if (!MEMORY_TYPES.includes(type)) throw new RangeError(`not a memory type: ${String(type)}`);
  return type;
}

function statements(db: Db) {
  return {
    entityByName: db.prepare<[number, string], EntityRecord>('SELECT id, name, kind FROM entities WHERE namespace_id = ? AND name = ?'),
    insertEntity: db.prepare('INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, ?, ?, ?, ?)'),
    // Positional: better-sqlite3 binds a named parameter by looking its name up on the object,
    // a string made per parameter per run (measured ~3 µs a row for these twenty).
    insertMemory: db.prepare(`INSERT INTO memories
      (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
       last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role, context,
       occurred_at, valid_until, superseded_by, fact_attribute)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // LIMIT spelled in the text (shared/literal-statements.ts): a bound one re-prepares each run.
    factsAfter: statementPerLimits<[string, string, number, number], TimelineFact>(db, (limit) => `SELECT rowid, id, content, occurred_at, valid_until
      FROM memories WHERE entity_id = ? AND fact_attribute = ? AND occurred_at > ? AND memory_type = 'semantic' AND archived = 0
      ORDER BY occurred_at, rowid LIMIT ${limit} OFFSET ?`),
    // The values valid at a moment, two ways (factsValidAt below picks one by position).
    // By validity: two seeks of memories_valid_facts (migration 16), one per way a fact can be
    // valid then (still current, or superseded only later), each side sorted and the two merged
    // by rowid. It walks the values that end after the moment: those valid then and each value
    // that starts later — so when few start later (facts arriving in time order) never the
    // superseded history.
    factsValidAtByValidity: statementPerLimits<[string, string, number, string, string, number, number, number], TimelineFact>(db, (limit) => `
      SELECT rowid, id, content, occurred_at, valid_until FROM memories INDEXED BY memories_valid_facts
        WHERE entity_id = ? AND fact_attribute = ? AND valid_until IS NULL AND occurred_at < ? AND memory_type = 'semantic' AND archived = 0
      UNION ALL
      SELECT rowid, id, content, occurred_at, valid_until FROM memories INDEXED BY memories_valid_facts
        WHERE entity_id = ? AND fact_attribute = ? AND valid_until > ? AND occurred_at < ? AND memory_type = 'semantic' AND archived = 0
      ORDER BY rowid LIMIT ${limit} OFFSET ?`),
    // By start: memories_by_fact_attribute up to the moment, filtered by validity. It walks the
    // values that start before the moment: cheap for a fact placed before most of its timeline
    // (an import newest first, an old fact backfilled), where the validity seek would walk
    // every value superseded after it.
    factsValidAtByStart: statementPerLimits<[string, string, number, number, number], TimelineFact>(db, (limit) => `SELECT rowid, id, content, occurred_at, valid_until
      FROM memories INDEXED BY memories_by_fact_attribute WHERE entity_id = ? AND fact_attribute = ? AND occurred_at < ? AND (valid_until IS NULL OR valid_until > ?)
        AND memory_type = 'semantic' AND archived = 0
      ORDER BY rowid LIMIT ${limit} OFFSET ?`),
    supersede: db.prepare('UPDATE memories SET valid_until = ?, superseded_by = ? WHERE rowid = ?'),
    // Only the same owner's facts of the same attribute can point at it (supersession.ts): the index finds them.
    reinstate: db.prepare<[number, string], { rowid: number }>(`UPDATE memories AS m SET valid_until = x.valid_until, superseded_by = x.superseded_by
      FROM memories AS x WHERE x.rowid = ? AND x.id = ? AND x.fact_attribute IS NOT NULL
        AND m.entity_id = x.entity_id AND m.fact_attribute = x.fact_attribute AND m.superseded_by = x.id
      RETURNING rowid`),
    // The vec0 cell a memory's vector belongs in (docs/superseded-vectors.md): its IVF cell
    // (@cell, or the one recorded when null), or that cell's retired twin.
    vectorCell: db.prepare<{ now: number; rowid: number; cell: number | null }, number>(
      `SELECT ${vectorCellSql('m', 'coalesce(@cell, m.vector_cell)')} FROM memories m WHERE m.rowid = @rowid`).pluck(),
    // Superseded facts in (valid_until, rowid) order past the cursor, no later than now.
    supersededThrough: statementPerLimits<{ ns: number; validUntil: number; rowid: number; now: number }, { rowid: number; validUntil: number }>(db, (limit) => `
      SELECT rowid, valid_until AS validUntil FROM memories INDEXED BY memories_superseded
      WHERE namespace_id = @ns AND superseded_by IS NOT NULL AND (valid_until, rowid) > (@validUntil, @rowid) AND valid_until <= @now
      ORDER BY valid_until, rowid LIMIT ${limit}`),
    turnContent: db.prepare<[string, number], string>(TURN_CONTENT_SQL).pluck(),
    link: db.prepare('INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)'),
    // The pool found the names before the writer runs: an entity forgotten in between is skipped.
    linkMention: db.prepare(`INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, relation)
      SELECT ?, id, 'mention' FROM entities WHERE id = ?`),
    // A current one first: the same words superseded earlier are history (remember.ts). The
    // type is spelled in the text: bound, it is compared with memories_promotable's
    // memory_type = 'episodic' and the statement is prepared again on every run.
    ownedDuplicate: statementPerValues<MemoryType, [string, string, number], MemoryRow>(db, memoryTypeLiteral, (type) => `SELECT rowid, id, memory_type, content,
      confidence, stability, extraction_tier, occurred_at, valid_until, superseded_by FROM memories
      WHERE entity_id = ? AND content_key = ? AND memory_type = '${type}' AND archived = 0 AND rowid > ?
      ORDER BY valid_until IS NOT NULL, rowid LIMIT 1`),
    raiseConfidence: db.prepare('UPDATE memories SET confidence = max(confidence, ?), last_access_at = ? WHERE rowid = ?'),
    insertEpisode: db.prepare('INSERT INTO episodes (id, namespace_id, started_at, last_activity_at) VALUES (?, ?, ?, ?)'),
    insertParticipant: db.prepare('INSERT OR IGNORE INTO episode_participants (episode_id, entity_id, position) VALUES (?, ?, ?)'),
    episode: db.prepare<[string, number], EpisodeState>(
      'SELECT started_at, last_activity_at, ended_at, message_count FROM episodes WHERE id = ? AND namespace_id = ?'),
    participants: db.prepare<[string], string>('SELECT entity_id FROM episode_participants WHERE episode_id = ? ORDER BY position').pluck(),
    touchEpisode: db.prepare('UPDATE episodes SET last_activity_at = ?, message_count = message_count + 1 WHERE id = ?'),
    endEpisode: db.prepare('UPDATE episodes SET ended_at = ?, outcome = ? WHERE id = ?'),
    countIds: db.prepare<[string], number>('SELECT count(*) FROM memories WHERE id IN (SELECT value FROM json_each(?))').pluck(),
    maxRowid: db.prepare<[], number>('SELECT coalesce(max(rowid), 0) FROM memories').pluck(),
    sourcesHeld: db.prepare<[string, number, string], number>(`SELECT count(*) FROM memories m
      JOIN memory_entities me ON me.memory_rowid = m.rowid
      WHERE m.id IN (SELECT value FROM json_each(?)) AND m.rowid <= ?
        AND me.entity_id = ? AND me.relation IN ('owner', 'participant')`).pluck(),
    rowsHeld: db.prepare<[string, number, string], number>(`SELECT count(*) FROM memory_entities
      WHERE memory_rowid IN (SELECT value FROM json_each(?)) AND memory_rowid <= ?
        AND entity_id = ? AND relation IN ('owner', 'participant')`).pluck(),
    entityHasMemories: db.prepare<[string, string], number>(`SELECT EXISTS (SELECT 1 FROM memories WHERE entity_id = ?)
      OR EXISTS (SELECT 1 FROM memory_entities WHERE entity_id = ? AND relation IN ('owner', 'participant'))`).pluck(),
    unlinkEntity: db.prepare('DELETE FROM memory_entities WHERE entity_id = ?'),
    dropParticipations: db.prepare('DELETE FROM episode_participants WHERE entity_id = ?'),
    deleteEntity: db.prepare('DELETE FROM entities WHERE id = ? AND namespace_id = ?'),
    deleteMemoryWithId: db.prepare<[number, string], Removed>(
      'DELETE FROM memories WHERE rowid = ? AND id = ? RETURNING episode_id, seq, memory_type'),
    clearContext: db.prepare(
      "UPDATE memories SET context = '' WHERE episode_id = ? AND seq = ? AND memory_type = 'episodic' AND context != ''"),
    unembedded: db.prepare<[number], number>('SELECT namespace_id FROM memories WHERE rowid = ? AND embedded = 0').pluck(),
    markEmbedded: db.prepare('UPDATE memories SET embedded = 1, vector_cell = ?, vector_seq = ? WHERE rowid = ?'),
    markUnembeddable: db.prepare('UPDATE memories SET embedded = -1 WHERE rowid = ? AND embedded = 0'),
    reviewState: db.prepare<[number], ReviewState>(
      'SELECT rowid, stability, difficulty, last_access_at FROM memories WHERE rowid = ? AND archived = 0'),
    review: db.prepare('UPDATE memories SET stability = ?, last_access_at = ?, access_count = access_count + 1 WHERE rowid = ?'),
    setMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    countPromotable: db.prepare<[string], number>(`SELECT count(*) FROM memories
      WHERE rowid IN (SELECT value FROM json_each(?))
        AND memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL`).pluck(),
    markPromoted: db.prepare('UPDATE memories SET promoted_into = ? WHERE rowid IN (SELECT value FROM json_each(?))'),
    decay: db.prepare(`UPDATE memories SET stability = @stability, difficulty = @difficulty,
        decayed_at = CASE WHEN @decayed THEN @at ELSE decayed_at END, archived = @archive
      WHERE rowid = @rowid AND archived = 0 AND last_access_at = @lastAccessAt`),
    newest: db.prepare<[number], Generation>(`
      SELECT g.generation, (SELECT min(cell) FROM vector_cells c WHERE c.generation = g.generation) AS first
      FROM vector_generations g WHERE g.namespace_id = ? ORDER BY g.generation DESC LIMIT 1`),
    cellIn: db.prepare<[number, number], { cell: number }>('SELECT cell FROM vector_cells WHERE cell = ? AND generation = ?'),
    insertGeneration: db.prepare('INSERT INTO vector_generations (namespace_id, trained_on, created_at) VALUES (?, ?, ?)'),
    insertCell: db.prepare('INSERT INTO vector_cells (generation, centroid) VALUES (?, ?)'),
    placement: db.prepare<[number, number], { vector_cell: number }>(
      'SELECT vector_cell FROM memories WHERE rowid = ? AND namespace_id = ? AND embedded = 1'),
    setCell: db.prepare('UPDATE memories SET vector_cell = ? WHERE rowid = ?'),
    unembed: db.prepare(`UPDATE memories SET embedded = 0, vector_cell = ${UNASSIGNED_CELL} WHERE rowid = ?`),
    olderInUse: db.prepare<[number, number], number>(`SELECT count(*) FROM memories
      WHERE namespace_id = ? AND embedded = 1 AND vector_cell > 0 AND vector_cell < ?`).pluck(),
    retireCells: db.prepare('DELETE FROM vector_cells WHERE generation IN (SELECT generation FROM vector_generations WHERE namespace_id = ? AND generation < ?)'),
    retireGenerations: db.prepare('DELETE FROM vector_generations WHERE namespace_id = ? AND generation < ?'),
  };
}

function vectorStatements(db: Db) {
  return {
    deleteVector: db.prepare('DELETE FROM memory_vectors WHERE rowid = ?'),
    insertVector: db.prepare(INSERT_VECTOR_SQL),
    embedding: db.prepare<[bigint], { embedding: Buffer }>('SELECT embedding FROM memory_vectors WHERE rowid = ?'),
    // The cell alone first: vec0 reads a column only when asked, and most lookups move nothing.
    cell: db.prepare<[bigint], number | bigint>('SELECT cell FROM memory_vectors WHERE rowid = ?').pluck(),
    placed: db.prepare<[bigint], { namespace_id: number; embedding: Buffer }>('SELECT namespace_id, embedding FROM memory_vectors WHERE rowid = ?'),
  };
}

export class SqliteRows implements WriteRows {
  private readonly s;
  /** One row a call: the rule checks its time budget between rows, as the row deletes are cheap. */
  readonly removeRound = 1;
  readonly snapshotsInDatabase = false;
  /** The vector table's statements, prepared on first use: vec0's table is made for the embedder after migration. */
  private vectorStatements?: ReturnType<typeof vectorStatements>;

  constructor(private readonly db: Db, private readonly namespaceId: number, private readonly now: () => number) {
    this.s = onConnection(db, statements, () => statements(db));
  }

  private get v() {
    return (this.vectorStatements ??= onConnection(this.db, vectorStatements, () => vectorStatements(this.db)));
  }

  *entityByName(name: string): Step<EntityRecord | undefined> {
    return this.s.entityByName.get(this.namespaceId, name);
  }

  *insertEntity(entity: EntityRecord, createdAt: number): Step<EntityRecord> {
    this.s.insertEntity.run(entity.id, this.namespaceId, entity.name, entity.kind, createdAt);
    return entity;
  }

  *ownedDuplicate(ownerId: string, contentKey: string, type: MemoryType, aboveRowid: number): Step<MemoryRow | undefined> {
    return this.s.ownedDuplicate(type).get(ownerId, contentKey, aboveRowid);
  }

  *raiseConfidence(rowid: number, confidence: number, at: number): Step<void> {
    this.s.raiseConfidence.run(confidence, at, rowid);
  }

  *insertMemory(m: MemoryInsert): Step<number> {
    const info = this.s.insertMemory.run(
      m.id, this.namespaceId, m.type, m.content, m.contentKey, m.confidence, m.stability, m.difficulty, m.at, m.at,
      m.tier, m.ownerId, m.episodeId, m.seq, m.role, m.context, m.occurredAt, m.validUntil, m.supersededBy, m.factAttribute,
    );
    const rowid = Number(info.lastInsertRowid);
    for (const link of m.links) this.s.link.run(rowid, link.entityId, link.relation);
    if (m.supersedes) {
      for (const fact of m.supersedes) {
        this.s.supersede.run(m.occurredAt, m.id, fact.rowid);
        this.place(fact.rowid);
      }
    }
    return rowid;
  }

  *factsAfter(ownerId: string, attribute: string, at: number, offset: number, limit: number): Step<TimelineFact[]> {
    return this.s.factsAfter(limit).all(ownerId, attribute, at, offset);
  }

  *factsValidAt(ownerId: string, attribute: string, at: number, offset: number, limit: number, manyLater: boolean): Step<TimelineFact[]> {
    return manyLater
      ? this.s.factsValidAtByStart(limit).all(ownerId, attribute, at, at, offset)
      : this.s.factsValidAtByValidity(limit).all(ownerId, attribute, at, ownerId, attribute, at, at, offset);
  }

  *supersede(rowid: number, at: number, by: string): Step<void> {
    this.s.supersede.run(at, by, rowid);
    this.place(rowid);
  }

  *turnContent(episodeId: string, seq: number): Step<string | undefined> {
    return this.s.turnContent.get(episodeId, seq);
  }

  *countIds(ids: string[]): Step<number> {
    return this.s.countIds.get(JSON.stringify(ids))!;
  }

  *maxRowid(): Step<number> {
    return this.s.maxRowid.get()!;
  }

  *sourcesHeld(ids: string[], hold: Hold): Step<boolean> {
    return this.s.sourcesHeld.get(JSON.stringify(ids), hold.maxRowid, hold.entityId)! > 0;
  }

  *rowsHeld(rowids: number[], hold: Hold): Step<boolean> {
    return this.s.rowsHeld.get(JSON.stringify(rowids), hold.maxRowid, hold.entityId)! > 0;
  }

  *reviewStates(rowids: number[]): Step<ReviewState[]> {
    const states: ReviewState[] = [];
    for (const rowid of rowids) {
      const state = this.s.reviewState.get(rowid);
      if (state) states.push(state);
    }
    return states;
  }

  *review(rowid: number, stability: number, lastAccessAt: number): Step<void> {
    this.s.review.run(stability, lastAccessAt, rowid);
  }

  *reinstateSupersededBy(rowid: number, id: string): Step<void> {
    // Valid now again (or superseded by a later fact still): each vector back where it belongs.
    for (const reinstated of this.s.reinstate.all(rowid, id)) this.place(reinstated.rowid);
  }

  /** The snapshot is the file the pool fsynced before the first chunk: nothing to copy here. */
  *removeMemories(rows: [number, string][], _snapshot: SnapshotHeaderT | undefined): Step<Removed[]> {
    const removed: Removed[] = [];
    for (const [rowid, id] of rows) {
      const gone = this.s.deleteMemoryWithId.get(rowid, id);
      if (!gone) continue;
      this.v.deleteVector.run(BigInt(rowid));
      removed.push(gone);
    }
    return removed;
  }

  *entityHasMemories(entityId: string): Step<boolean> {
    return this.s.entityHasMemories.get(entityId, entityId) === 1;
  }

  *removeEntity(entityId: string): Step<boolean> {
    this.s.unlinkEntity.run(entityId);
    this.s.dropParticipations.run(entityId);
    return this.s.deleteEntity.run(entityId, this.namespaceId).changes === 1;
  }

  *clearContext(turns: { episodeId: string; seq: number }[]): Step<void> {
    for (const turn of turns) this.s.clearContext.run(turn.episodeId, turn.seq);
  }

  *insertEpisode(id: string, at: number, startedAt: number): Step<void> {
    this.s.insertEpisode.run(id, this.namespaceId, startedAt, at);
  }

  *insertParticipant(episodeId: string, entityId: string, position: number): Step<void> {
    this.s.insertParticipant.run(episodeId, entityId, position);
  }

  *episode(id: string): Step<EpisodeState | undefined> {
    return this.s.episode.get(id, this.namespaceId);
  }

  *participants(episodeId: string): Step<string[]> {
    return this.s.participants.all(episodeId);
  }

  *touchEpisode(id: string, at: number): Step<void> {
    this.s.touchEpisode.run(at, id);
  }

  *endEpisode(id: string, at: number, outcome: string | null): Step<void> {
    this.s.endEpisode.run(at, outcome, id);
  }

  *countPromotable(rowids: number[]): Step<number> {
    return this.s.countPromotable.get(JSON.stringify(rowids))!;
  }

  *markPromoted(rowids: number[], into: number): Step<void> {
    this.s.markPromoted.run(into, JSON.stringify(rowids));
  }

  *decay(u: DecayUpdate): Step<boolean> {
    return this.s.decay.run({
      rowid: u.rowid, lastAccessAt: u.lastAccessAt, stability: u.stability, difficulty: u.difficulty,
      decayed: u.decayed ? 1 : 0, archive: u.archive ? 1 : 0, at: u.at,
    }).changes > 0;
  }

  *setMeta(key: string, value: string): Step<void> {
    this.s.setMeta.run(key, value);
  }

  *unembedded(rowid: number): Step<number | undefined> {
    return this.s.unembedded.get(rowid);
  }

  /** `cell` is the IVF cell (markEmbedded records it); vec0 gets its retired twin for a fact superseded already. */
  *putVector(rowid: number, namespaceId: number, cell: number, vector: Float32Array): Step<void> {
    this.v.insertVector.run(BigInt(rowid), BigInt(namespaceId), BigInt(this.vectorCell(rowid, cell)), blobOf(vector));
  }

  *markEmbedded(rowid: number, cell: number): Step<void> {
    this.s.markEmbedded.run(cell, nextVectorSeq(), rowid);
  }

  *linkMentions(rowid: number, entityIds: string[]): Step<void> {
    for (const entityId of entityIds) this.s.linkMention.run(rowid, entityId);
  }

  *markUnembeddable(rowids: number[]): Step<void> {
    for (const rowid of rowids) this.s.markUnembeddable.run(rowid);
  }

  *newestGeneration(namespaceId: number): Step<Generation | undefined> {
    return this.s.newest.get(namespaceId);
  }

  *isCellOf(cell: number, generation: number): Step<boolean> {
    return this.s.cellIn.get(cell, generation) !== undefined;
  }

  *insertGeneration(trainedOn: number, at: number): Step<number> {
    return Number(this.s.insertGeneration.run(this.namespaceId, trainedOn, at).lastInsertRowid);
  }

  *insertCell(generation: number, centroid: Float32Array): Step<void> {
    this.s.insertCell.run(generation, blobOf(centroid));
  }

  *placement(rowid: number): Step<{ vector_cell: number; has_vector: boolean } | undefined> {
    const placed = this.s.placement.get(rowid, this.namespaceId);
    return placed && { vector_cell: placed.vector_cell, has_vector: this.v.embedding.get(BigInt(rowid)) !== undefined };
  }

  /** vec0 keeps a row's cell as a partition key: the vector moves by delete and re-insert. */
  *moveVector(rowid: number, cell: number): Step<void> {
    const key = BigInt(rowid);
    const stored = this.v.embedding.get(key)!;
    this.v.deleteVector.run(key);
    this.v.insertVector.run(key, BigInt(this.namespaceId), BigInt(this.vectorCell(rowid, cell)), stored.embedding);
    this.s.setCell.run(cell, rowid);
  }

  /** A store opened without an embedder's table (rules run on a bare file) has no vector to move. */
  private vectorTableSeen = false;
  private hasVectorTable(): boolean {
    this.vectorTableSeen ||= this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_vectors'").get() !== undefined;
    return this.vectorTableSeen;
  }

  /**
   * The vec0 cell for a memory whose IVF cell is `cell`: its retired twin while the memory is
   * superseded and no longer valid (docs/superseded-vectors.md), so default recalls never scan it.
   */
  private vectorCell(rowid: number, cell: number): number {
    return this.s.vectorCell.get({ now: this.now(), rowid, cell }) ?? cell;
  }

  *supersededThrough(after: SupersededCursor | null, now: number, limit: number): Step<SupersededCursor[]> {
    // Before every fact: valid_until is a time in ms (never below 0 here) and rowids start at 1.
    const from = after ?? { validUntil: Number.MIN_SAFE_INTEGER, rowid: 0 };
    return this.s.supersededThrough(limit).all({ ns: this.namespaceId, validUntil: from.validUntil, rowid: from.rowid, now });
  }

  *placeVector(rowid: number): Step<boolean> {
    return this.place(rowid);
  }

  /**
   * Moves a memory's vector (if it has one) into the vec0 cell its supersession calls for;
   * answers whether it moved. Every change to superseded_by / valid_until goes through here: a
   * retired vector of a fact valid now would be missed by every default recall.
   */
  private place(rowid: number): boolean {
    if (!this.hasVectorTable()) return false;
    const key = BigInt(rowid);
    const cell = this.v.cell.get(key);
    if (cell === undefined) return false;
    const wanted = this.s.vectorCell.get({ now: this.now(), rowid, cell: null });
    if (wanted === undefined || Number(cell) === wanted) return false;
    const placed = this.v.placed.get(key)!;
    this.v.deleteVector.run(key);
    this.v.insertVector.run(key, BigInt(placed.namespace_id), BigInt(wanted), placed.embedding);
    return true;
  }

  *unembed(rowid: number): Step<void> {
    this.s.unembed.run(rowid);
  }

  *olderCellsInUse(first: number): Step<boolean> {
    return this.s.olderInUse.get(this.namespaceId, first)! > 0;
  }

  *retireGenerationsBelow(generation: number): Step<number> {
    this.s.retireCells.run(this.namespaceId, generation);
    return this.s.retireGenerations.run(this.namespaceId, generation).changes;
  }

  // restore (commands/restore.ts): the offline import's verbatim inserts and vector writes
  *holderOf(table: IdTable, id: string): Step<{ here: boolean; namespace: string } | undefined> {
    const owner = this.verbatim.rows.ownerOf(table, id);
    return owner && { here: owner.ns === this.namespaceId, namespace: owner.name };
  }

  *putParticipations(entityId: string, episodes: [string, number][]): Step<void> {
    this.verbatim.rows.putParticipations(entityId, episodes);
  }

  *insertVerbatim(row: Record<string, unknown>): Step<number | null> {
    return this.verbatim.rows.insertVerbatim(row);
  }

  *insertLink(rowid: number, entityId: string, relation: string): Step<void> {
    this.s.link.run(rowid, entityId, relation);
  }

  *restoreVector(rowid: number, embedding: number[], embedder: string | null): Step<boolean> {
    // Placed by the rule (VectorRows): a restored fact already superseded goes to the retired twin.
    return this.verbatim.vectors.write(rowid, embedding, embedder);
  }

  private verbatimWriters?: { rows: RowWriter; vectors: VectorRows };

  private get verbatim() {
    return (this.verbatimWriters ??= { rows: new RowWriter(this.db, this.namespaceId), vectors: new VectorRows(this.db, this.namespaceId, this.now) });
  }
}
