// The write side of the database. Every method runs inside the writer's group-commit
// transaction (see thread.ts) and may throw a ServiceError, which rolls back only that
// command's savepoint.
import type { MemoryRow, NewMemory } from '../store-port.js';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/db.js';
import type { Statement } from 'better-sqlite3';
import type { Config } from '../../shared/config.js';
import { fail } from '../../shared/errors.js';
import { INITIAL_DIFFICULTY, initialStability, reinforcedStability } from '../../shared/fsrs.js';
import type { CommandOf, ExtractedMemory, WriterResults } from '../../shared/messages.js';
import { FIRST_USE_KIND, type EntityKind, type EntityRecord, type MemoryType } from '../../shared/schemas.js';
import { contentKey } from '../../shared/text.js';
import { blobOf } from '../../shared/meta.js';
import { INSERT_VECTOR_SQL, TURN_CONTENT_SQL } from '../../shared/sql-schema.js';
import { ConsolidationWriter } from './consolidation.js';
import { VectorIndexWriter } from './ivf-generations.js';
import { IdConflictError } from './row-writer.js';
import { SnapshotRestorer } from './restore-snapshot.js';


/**
 * Time one forgetRows or restoreRows command may run before handing the writer back to other
 * writes: a huge entity is deleted or restored over many commands, other batches commit between.
 */
const CHUNK_BUDGET_MS = 40;



export class WriteStore {
  private readonly s;
  private readonly consolidation: ConsolidationWriter;
  /** Deletes in progress (forgetBegin … forgetEnd), by deletion id. */
  private readonly deleting = new Map<number, { entityId: string; maxRowid: number }>();
  /** IVF index upkeep (install, move, retire); attachVectors asks it which cell is current. */
  readonly vectorIndex: VectorIndexWriter;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly namespaceId: number,
    private readonly now: () => number = Date.now,
  ) {
    this.s = {
      entityByName: db.prepare<[number, string], EntityRecord>(
        'SELECT id, name, kind FROM entities WHERE namespace_id = ? AND name = ?'),
      insertEntity: db.prepare(
        'INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, ?, ?, ?, ?)'),
      insertMemory: db.prepare(`INSERT INTO memories
        (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
         last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role, context)
        VALUES (@id, @ns, @type, @content, @key, @confidence, @stability, @difficulty,
         @now, @now, @tier, @owner, @episode, @seq, @role, @context)`),
      // The turn before, indexed with a message as its context (see migration 6).
      previousTurn: db.prepare<[string, number], string>(TURN_CONTENT_SQL).pluck(),
      link: db.prepare('INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)'),
      ownedDuplicate: db.prepare<[string, string, string, number], MemoryRow>(`SELECT rowid, id, memory_type, content,
        confidence, stability, extraction_tier FROM memories
        WHERE entity_id = ? AND content_key = ? AND memory_type = ? AND archived = 0 AND rowid > ? LIMIT 1`),
      raiseConfidence: db.prepare('UPDATE memories SET confidence = max(confidence, ?), last_access_at = ? WHERE rowid = ?'),
      insertEpisode: db.prepare(
        'INSERT INTO episodes (id, namespace_id, started_at, last_activity_at) VALUES (?, ?, ?, ?)'),
      insertParticipant: db.prepare(
        'INSERT OR IGNORE INTO episode_participants (episode_id, entity_id, position) VALUES (?, ?, ?)'),
      episode: db.prepare<[string, number], { id: string; last_activity_at: number; ended_at: number | null; message_count: number }>(
        'SELECT id, last_activity_at, ended_at, message_count FROM episodes WHERE id = ? AND namespace_id = ?'),
      participants: db.prepare<[string], { entity_id: string }>(
        'SELECT entity_id FROM episode_participants WHERE episode_id = ? ORDER BY position'),
      touchEpisode: db.prepare('UPDATE episodes SET last_activity_at = ?, message_count = message_count + 1 WHERE id = ?'),
      endEpisode: db.prepare('UPDATE episodes SET ended_at = ?, outcome = ? WHERE id = ?'),
      countIds: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM memories WHERE id IN (SELECT value FROM json_each(?))'),
      maxRowid: db.prepare<[], { n: number }>('SELECT coalesce(max(rowid), 0) AS n FROM memories'),
      doomedSources: db.prepare<[string, number, string], { n: number }>(`SELECT count(*) AS n FROM memories m
        JOIN memory_entities me ON me.memory_rowid = m.rowid
        WHERE m.id IN (SELECT value FROM json_each(?)) AND m.rowid <= ?
          AND me.entity_id = ? AND me.relation IN ('owner', 'participant')`),
      doomedRows: db.prepare<[string, number, string], { n: number }>(`SELECT count(*) AS n FROM memory_entities
        WHERE memory_rowid IN (SELECT value FROM json_each(?)) AND memory_rowid <= ?
          AND entity_id = ? AND relation IN ('owner', 'participant')`),
      deleteMemoryWithId: db.prepare<[number, string], { episode_id: string | null; seq: number | null }>(
        "DELETE FROM memories WHERE rowid = ? AND id = ? RETURNING episode_id, seq"),
      // The turn after a forgotten one must not keep its text as context (see migration 6).
      forgetContext: db.prepare(
        "UPDATE memories SET context = '' WHERE episode_id = ? AND seq = ? AND memory_type = 'episodic' AND context != ''"),
      deleteVector: db.prepare('DELETE FROM memory_vectors WHERE rowid = ?'),
      unembedded: db.prepare<[number], { namespace_id: number }>('SELECT namespace_id FROM memories WHERE rowid = ? AND embedded = 0'),
      insertVector: db.prepare(INSERT_VECTOR_SQL),
      markEmbedded: db.prepare('UPDATE memories SET embedded = 1, vector_cell = ? WHERE rowid = ?'),
      markUnembeddable: db.prepare('UPDATE memories SET embedded = -1 WHERE rowid = ? AND embedded = 0'),
      reviewState: db.prepare<[number], { stability: number; difficulty: number; last_access_at: number }>(
        'SELECT stability, difficulty, last_access_at FROM memories WHERE rowid = ? AND archived = 0'),
      review: db.prepare(
        'UPDATE memories SET stability = ?, last_access_at = ?, access_count = access_count + 1 WHERE rowid = ?'),
    };
    this.consolidation = new ConsolidationWriter(db, namespaceId);
    this.vectorIndex = new VectorIndexWriter(db, namespaceId, () => this.now());
  }

  // ------------------------------------------------------------------ entities

  /** Get-or-create. Atomic because only this thread writes and it runs one command at a time. */
  ensureEntity(cmd: CommandOf<'ensureEntity'>): WriterResults['ensureEntity'] {
    return this.entity(cmd.name, cmd.kind);
  }

  private entity(name: string, kind: EntityKind = FIRST_USE_KIND): EntityRecord {
    const existing = this.s.entityByName.get(this.namespaceId, name);
    if (existing) return existing;
    const created: EntityRecord = { id: randomUUID(), name, kind };
    this.s.insertEntity.run(created.id, this.namespaceId, name, kind, this.now());
    return created;
  }

  // ------------------------------------------------------------------ memories

  remember(cmd: CommandOf<'remember'>): WriterResults['remember'] {
    const owner = this.entity(cmd.entity);
    const row = this.storeOwned(owner.id, {
      type: 'semantic', content: cmd.fact, confidence: cmd.confidence, tier: 1,
      ownerId: owner.id, episodeId: null, seq: null, role: null, links: [],
    });
    return {
      id: row.id, content: row.content, memory_type: row.memory_type,
      confidence: row.confidence, stability: row.stability, extraction_tier: row.extraction_tier,
    };
  }

  /** Stores a memory owned by an entity unless the entity already holds the same fact. */
  private storeOwned(ownerId: string, memory: NewMemory): MemoryRow & { created: boolean } {
    const key = contentKey(memory.content);
    // A row an open delete is about to remove is no duplicate: the new fact gets a row of its own.
    const duplicate = this.s.ownedDuplicate.get(ownerId, key, memory.type, this.deletedUpTo(ownerId));
    if (duplicate) {
      // Hearing a fact again is evidence for it: keep the stronger confidence.
      this.s.raiseConfidence.run(memory.confidence, this.now(), duplicate.rowid);
      return { ...duplicate, confidence: Math.max(duplicate.confidence, memory.confidence), created: false };
    }
    return { ...this.insertMemory({ ...memory, links: [{ entityId: ownerId, relation: 'owner' }, ...memory.links] }), created: true };
  }

  private insertMemory(memory: NewMemory): MemoryRow {
    const id = randomUUID();
    const stability = initialStability(memory.type, memory.confidence);
    const info = this.s.insertMemory.run({
      id, ns: this.namespaceId, type: memory.type, content: memory.content, key: contentKey(memory.content),
      confidence: memory.confidence, stability, difficulty: INITIAL_DIFFICULTY, now: this.now(),
      tier: memory.tier, owner: memory.ownerId, episode: memory.episodeId, seq: memory.seq, role: memory.role,
      context: memory.context ?? '',
    });
    const rowid = Number(info.lastInsertRowid);
    for (const link of memory.links) this.s.link.run(rowid, link.entityId, link.relation);
    return {
      rowid, id, memory_type: memory.type, content: memory.content,
      confidence: memory.confidence, stability, extraction_tier: memory.tier,
    };
  }

  // ------------------------------------------------------------------ episodes

  startEpisode(cmd: CommandOf<'startEpisode'>): WriterResults['startEpisode'] {
    const id = randomUUID();
    const now = this.now();
    this.s.insertEpisode.run(id, this.namespaceId, now, now);
    cmd.participants.forEach((name, position) => {
      this.s.insertParticipant.run(id, this.entity(name).id, position);
    });
    return { episode_id: id };
  }

  /** Each message is stored at once as an episodic memory, so it is recallable mid-conversation. */
  addMessage(cmd: CommandOf<'addMessage'>): WriterResults['addMessage'] {
    const episode = this.s.episode.get(cmd.episodeId, this.namespaceId);
    const now = this.now();
    if (!episode) throw fail.episodeNotFound(cmd.episodeId);
    if (episode.ended_at !== null) throw fail.episodeEnded(cmd.episodeId);
    if (now - episode.last_activity_at > this.config.episodeTtlMs) {
      throw fail.episodeExpired(cmd.episodeId);
    }
    const participants = this.s.participants.all(cmd.episodeId);
    this.insertMemory({
      type: 'episodic', content: cmd.content, confidence: 1, tier: 1, ownerId: null,
      episodeId: cmd.episodeId, seq: episode.message_count, role: cmd.role,
      context: episode.message_count > 0 ? this.s.previousTurn.get(cmd.episodeId, episode.message_count - 1) ?? '' : '',
      links: participants.map((p) => ({ entityId: p.entity_id, relation: 'participant' as const })),
    });
    this.s.touchEpisode.run(now, cmd.episodeId);
    return { status: 'ok' };
  }

  /** Ends an episode (expired ones too) and stores what extraction produced from it. */
  endEpisode(cmd: CommandOf<'endEpisode'>): WriterResults['endEpisode'] {
    const episode = this.s.episode.get(cmd.episodeId, this.namespaceId);
    if (!episode) throw fail.episodeNotFound(cmd.episodeId);
    if (episode.ended_at !== null) throw fail.episodeEnded(cmd.episodeId);
    this.s.endEpisode.run(this.now(), cmd.outcome, cmd.episodeId);
    // Extraction ran on a snapshot, possibly while waiting seconds for an LLM. If a delete has
    // removed any turn it read since, storing its output would bring forgotten data back.
    if (this.s.countIds.get(JSON.stringify(cmd.sourceIds))!.n !== cmd.sourceIds.length) return { memories_created: 0 };
    // The same when a delete in progress is about to remove one of them.
    if (this.anySourceBeingDeleted(cmd.sourceIds)) return { memories_created: 0 };
    let created = 0;
    for (const memory of cmd.memories) if (this.storeExtracted(cmd.episodeId, memory)) created++;
    return { memories_created: created };
  }

  private storeExtracted(episodeId: string, memory: ExtractedMemory): boolean {
    const [ownerName, ...mentioned] = memory.entities;
    if (ownerName === undefined) return false;
    const owner = this.entity(ownerName);
    const links = mentioned
      .filter((name) => name !== ownerName)
      .map((name) => ({ entityId: this.entity(name).id, relation: 'mention' as const }));
    return this.storeOwned(owner.id, {
      type: memory.memory_type, content: memory.content, confidence: memory.confidence,
      tier: memory.extraction_tier, ownerId: owner.id, episodeId, seq: null, role: null, links,
    }).created;
  }

  // ------------------------------------------------------------------ deletion

  /** Opens a delete (see CommandOf<'forgetBegin'>); its snapshot holds rows up to `maxRowid`. */
  forgetBegin(cmd: CommandOf<'forgetBegin'>): WriterResults['forgetBegin'] {
    // Row ids only grow (AUTOINCREMENT): every memory written from now on is above maxRowid.
    const maxRowid = this.s.maxRowid.get()!.n;
    const entity = this.s.entityByName.get(this.namespaceId, cmd.entity);
    if (entity) this.deleting.set(cmd.deletionId, { entityId: entity.id, maxRowid });
    return { maxRowid };
  }

  forgetEnd(cmd: CommandOf<'forgetEnd'>): WriterResults['forgetEnd'] {
    this.deleting.delete(cmd.deletionId);
    return { status: 'ok' };
  }

  /** The entity's memories up to this rowid are being deleted (0: none are). */
  private deletedUpTo(entityId: string): number {
    let upTo = 0;
    for (const open of this.deleting.values()) if (open.entityId === entityId) upTo = Math.max(upTo, open.maxRowid);
    return upTo;
  }

  /** Some of these memories (by id) are held by an open delete. */
  private anySourceBeingDeleted(sourceIds: string[]): boolean {
    return this.anyHeld(this.s.doomedSources, sourceIds);
  }

  /** Some of these memories (by rowid) are held by an open delete. */
  private anyRowBeingDeleted(rowids: number[]): boolean {
    return this.anyHeld(this.s.doomedRows, rowids);
  }

  private anyHeld(query: Statement<[string, number, string], { n: number }>, memories: (string | number)[]): boolean {
    if (this.deleting.size === 0 || memories.length === 0) return false;
    const list = JSON.stringify(memories);
    for (const open of this.deleting.values()) {
      if (query.get(list, open.maxRowid, open.entityId)!.n > 0) return true;
    }
    return false;
  }

  /**
   * Deletes rows listed in an fsynced deletion snapshot (see workers/entity-deletion.ts), for at
   * most CHUNK_BUDGET_MS: a huge entity is deleted over many commands, and other writes'
   * batches commit between them. Rows already gone are skipped.
   */
  forgetRows(cmd: CommandOf<'forgetRows'>): WriterResults['forgetRows'] {
    const started = performance.now();
    let processed = 0;
    let removed = 0;
    for (const [rowid, id] of cmd.rows) {
      if (processed > 0 && performance.now() - started > CHUNK_BUDGET_MS) break;
      processed++;
      const deleted = this.s.deleteMemoryWithId.get(rowid, id);
      if (!deleted) continue;
      if (deleted.episode_id !== null && deleted.seq !== null) this.s.forgetContext.run(deleted.episode_id, deleted.seq + 1);
      this.s.deleteVector.run(BigInt(rowid));
      removed++;
    }
    return { processed, removed };
  }

  /**
   * Puts back memories of a deletion snapshot (the offline restore's code, SnapshotRestorer), for
   * at most CHUNK_BUDGET_MS; memories already present are counted and left alone.
   */
  restoreRows(cmd: CommandOf<'restoreRows'>): WriterResults['restoreRows'] {
    const started = performance.now();
    const restorer = new SnapshotRestorer(this.db, this.namespaceId, cmd.snapshot, this.now());
    let processed = 0;
    try {
      for (const memory of cmd.memories) {
        if (processed > 0 && performance.now() - started > CHUNK_BUDGET_MS) break;
        processed++;
        restorer.put(memory);
      }
    } catch (error) {
      if (error instanceof IdConflictError) throw fail.snapshotIdsTaken(error.message);
      throw error;
    }
    const { inserted, present } = restorer.result;
    return { processed, restored: inserted, present };
  }

  // ------------------------------------------------------------------ vectors, reinforcement

  /** Stores vectors computed in the pool; rows deleted or already embedded meanwhile are skipped. */
  attachVectors(cmd: CommandOf<'attachVectors'>): WriterResults['attachVectors'] {
    let attached = 0;
    for (const item of cmd.items) {
      const row = this.s.unembedded.get(item.rowid);
      if (!row) continue;
      const vector = item.vector instanceof Float32Array ? item.vector : Float32Array.from(item.vector as ArrayLike<number>);
      const cell = this.vectorIndex.cellFor(row.namespace_id, item.cell);
      this.s.insertVector.run(BigInt(item.rowid), BigInt(row.namespace_id), BigInt(cell), blobOf(vector));
      this.s.markEmbedded.run(cell, item.rowid);
      for (const entityId of item.mentionedEntityIds) this.s.link.run(item.rowid, entityId, 'mention');
      attached++;
    }
    // -1: the embedder rejected this text; it stays out of the backlog (a re-embed retries it).
    for (const rowid of cmd.unembeddable ?? []) this.s.markUnembeddable.run(rowid);
    return { attached };
  }

  /** A recalled memory counts as a successful FSRS review: stability grows, last access moves. */
  reinforce(cmd: CommandOf<'reinforce'>): WriterResults['reinforce'] {
    let reinforced = 0;
    for (const rowid of new Set(cmd.rowids)) {
      const state = this.s.reviewState.get(rowid);
      if (!state) continue;
      const stability = reinforcedStability(state.stability, state.difficulty, cmd.at - state.last_access_at);
      this.s.review.run(stability, Math.max(cmd.at, state.last_access_at), rowid);
      reinforced++;
    }
    return { reinforced };
  }

  // ------------------------------------------------------------------ consolidation

  /** Applies a plan computed in the pool; promoted memories go through the de-duplicating path. */
  consolidate(cmd: CommandOf<'consolidate'>): WriterResults['consolidate'] {
    // A promotion from episodic rows an open delete holds would outlive the delete (as extraction would).
    return this.consolidation.apply(cmd.plan, (p) => this.storeOwned(p.ownerId, {
      type: 'semantic', content: p.content, confidence: p.confidence, tier: 1,
      ownerId: p.ownerId, episodeId: p.episodeId, seq: null, role: null, links: [],
    }), (members) => this.anyRowBeingDeleted(members));
  }
}
