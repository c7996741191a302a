// The PostgreSQL adapter's writer commands: WriteStore's semantics (../store.ts) over SQL run in
// the flush's transaction, each call in its own savepoint (batch.ts). Same rules as SQLite: an
// entity is created on first use, a fact an entity already holds raises its confidence instead of
// adding a row (content_key), messages are stored at once as episodic memories with the previous
// turn as context, and rows an open delete holds count as gone. A COMMIT cut by a failover has an
// unknown outcome: entities (get-or-create by name) and remembered facts (de-duplicated by
// content_key) are found again by a retry; episodes and messages get new ids (README).
import type { MemoryRow, NewMemory } from '../store-port.js';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../shared/config.js';
import { fail } from '../../shared/errors.js';
import { INITIAL_DIFFICULTY, initialStability, reinforcedStability } from '../../shared/fsrs.js';
import type { CommandOf, ExtractedMemory, WriterResults } from '../../shared/protocol/writer.js';
import { FIRST_USE_KIND, type EntityKind, type EntityRecord, type MemoryType } from '../../shared/schemas.js';
import { contentKey } from '../../shared/text.js';
import type { Tx } from './connect.js';
import type { OpenDeletes } from './deletion.js';




/** Entities remembered by name (a bound: the cache starts over when full). */
const ENTITY_CACHE_MAX = 10_000;

export class PgMemoryWriter {
  /**
   * Entities by name, committed ones only: entities are never deleted or changed once created
   * (deletion removes memories, not entities), so a name seen committed stays valid on every node
   * — unless the database itself goes back in time (failover, restore): see forgetEntities.
   */
  private readonly known = new Map<string, EntityRecord>();
  /** Entities read or created in the running flush; null when the flush runs with savepoints. */
  private flushEntities: EntityRecord[] | null = null;

  constructor(
    private readonly config: Config,
    readonly namespaceId: number,
    private readonly deletes: OpenDeletes,
    private readonly now: () => number = Date.now,
  ) {}

  ensureEntity(cmd: CommandOf<'ensureEntity'>, tx: Tx): Promise<WriterResults['ensureEntity']> {
    return this.entity(tx, cmd.name, cmd.kind);
  }

  /**
   * A flush starts. `collect`: it commits or rolls back as a whole (no savepoints), so the
   * entities it meets can be cached once it committed. With savepoints a command's entity may be
   * rolled back alone, so nothing is collected.
   */
  beginFlush(collect: boolean): void {
    this.flushEntities = collect ? [] : null;
  }

  endFlush(committed: boolean): void {
    if (committed && this.flushEntities) {
      if (this.known.size + this.flushEntities.length > ENTITY_CACHE_MAX) this.known.clear();
      for (const entity of this.flushEntities) this.known.set(entity.name, entity);
    }
    this.flushEntities = null;
  }

  /**
   * Forgets the cached entities. Called when a flush met a foreign-key violation (an entity row
   * the cache holds is gone: a failover to a replica that lacked its commit, a restored backup)
   * and when the connection closed (the server it reconnects to may be another one).
   */
  forgetEntities(): void {
    this.known.clear();
  }

  /** Get-or-create by (namespace, name): ON CONFLICT keeps it one row even outside the namespace lock. */
  async entity(tx: Tx, name: string, kind: EntityKind = FIRST_USE_KIND): Promise<EntityRecord> {
    const cached = this.known.get(name);
    if (cached) return cached;
    const found = await this.findOrCreate(tx, name, kind);
    this.flushEntities?.push(found);
    return found;
  }

  private async findOrCreate(tx: Tx, name: string, kind: EntityKind): Promise<EntityRecord> {
    const [existing] = await tx<EntityRecord[]>`SELECT id, name, kind FROM entities WHERE namespace_id = ${this.namespaceId} AND name = ${name}`;
    if (existing) return existing;
    const [created] = await tx<EntityRecord[]>`INSERT INTO entities (id, namespace_id, name, kind, created_at)
      VALUES (${randomUUID()}, ${this.namespaceId}, ${name}, ${kind}, ${this.now()})
      ON CONFLICT (namespace_id, name) DO NOTHING RETURNING id, name, kind`;
    if (created) return created;
    const [raced] = await tx<EntityRecord[]>`SELECT id, name, kind FROM entities WHERE namespace_id = ${this.namespaceId} AND name = ${name}`;
    return raced!;
  }

  async remember(cmd: CommandOf<'remember'>, tx: Tx): Promise<WriterResults['remember']> {
    const owner = await this.entity(tx, cmd.entity);
    const row = await this.storeOwned(tx, owner.id, {
      type: 'semantic', content: cmd.fact, confidence: cmd.confidence, tier: 1,
      ownerId: owner.id, episodeId: null, seq: null, role: null, links: [],
    });
    return {
      id: row.id, content: row.content, memory_type: row.memory_type,
      confidence: row.confidence, stability: row.stability, extraction_tier: row.extraction_tier,
    };
  }

  /** Stores a memory owned by an entity unless the entity already holds the same fact. */
  async storeOwned(tx: Tx, ownerId: string, memory: NewMemory): Promise<MemoryRow & { created: boolean }> {
    const key = contentKey(memory.content);
    // A row an open delete is about to remove is no duplicate: the new fact gets a row of its own.
    // md5(content_key) is what memories_by_entity indexes (migration 3); the text comparison decides.
    const [duplicate] = await tx<MemoryRow[]>`SELECT rowid, id, memory_type, content, confidence, stability, extraction_tier
      FROM memories WHERE entity_id = ${ownerId} AND md5(content_key) = md5(${key}) AND content_key = ${key} AND memory_type = ${memory.type}
        AND archived = 0 AND rowid > ${this.deletes.deletedUpTo(ownerId)} LIMIT 1`;
    if (duplicate) {
      // Hearing a fact again is evidence for it: keep the stronger confidence.
      await tx`UPDATE memories SET confidence = greatest(confidence, ${memory.confidence}), last_access_at = ${this.now()}
        WHERE rowid = ${duplicate.rowid}`;
      return { ...duplicate, confidence: Math.max(duplicate.confidence, memory.confidence), created: false };
    }
    const links = [{ entityId: ownerId, relation: 'owner' as const }, ...memory.links];
    return { ...(await this.insertMemory(tx, { ...memory, links })), created: true };
  }

  async insertMemory(tx: Tx, memory: NewMemory): Promise<MemoryRow> {
    const id = randomUUID();
    const stability = initialStability(memory.type, memory.confidence);
    const now = this.now();
    // The row and its entity links in one statement (one round trip).
    const [inserted] = await tx<{ rowid: number }[]>`WITH m AS (INSERT INTO memories
        (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
         last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role, context)
      VALUES (${id}, ${this.namespaceId}, ${memory.type}, ${memory.content}, ${contentKey(memory.content)},
        ${memory.confidence}, ${stability}, ${INITIAL_DIFFICULTY}, ${now}, ${now}, ${memory.tier},
        ${memory.ownerId}, ${memory.episodeId}, ${memory.seq}, ${memory.role}, ${memory.context ?? ''})
      ON CONFLICT (id) DO NOTHING RETURNING rowid),
      links AS (INSERT INTO memory_entities (memory_rowid, entity_id, relation)
        SELECT m.rowid, l.entity_id, l.relation FROM m,
          unnest(${memory.links.map((l) => l.entityId)}::text[], ${memory.links.map((l) => l.relation)}::text[]) AS l(entity_id, relation)
        ON CONFLICT DO NOTHING)
      SELECT rowid FROM m`;
    const rowid = inserted!.rowid;
    return {
      rowid, id, memory_type: memory.type, content: memory.content,
      confidence: memory.confidence, stability, extraction_tier: memory.tier,
    };
  }

  // ------------------------------------------------------------------ episodes

  async startEpisode(cmd: CommandOf<'startEpisode'>, tx: Tx): Promise<WriterResults['startEpisode']> {
    const id = randomUUID();
    const now = this.now();
    await tx`INSERT INTO episodes (id, namespace_id, started_at, last_activity_at) VALUES (${id}, ${this.namespaceId}, ${now}, ${now})
      ON CONFLICT (id) DO NOTHING`;
    for (const [position, name] of cmd.participants.entries()) {
      const entity = await this.entity(tx, name);
      await tx`INSERT INTO episode_participants (episode_id, entity_id, position) VALUES (${id}, ${entity.id}, ${position})
        ON CONFLICT DO NOTHING`;
    }
    return { episode_id: id };
  }

  async addMessage(cmd: CommandOf<'addMessage'>, tx: Tx): Promise<WriterResults['addMessage']> {
    const episode = await this.episode(tx, cmd.episodeId);
    const now = this.now();
    if (!episode) throw fail.episodeNotFound(cmd.episodeId);
    if (episode.ended_at !== null) throw fail.episodeEnded(cmd.episodeId);
    if (now - episode.last_activity_at > this.config.episodeTtlMs) throw fail.episodeExpired(cmd.episodeId);
    const participants = await tx<{ entity_id: string }[]>`SELECT entity_id FROM episode_participants
      WHERE episode_id = ${cmd.episodeId} ORDER BY position`;
    const seq = episode.message_count;
    const [previous] = seq > 0 ? await tx<{ content: string }[]>`SELECT content FROM memories
      WHERE episode_id = ${cmd.episodeId} AND seq = ${seq - 1} AND memory_type = 'episodic'` : [];
    await this.insertMemory(tx, {
      type: 'episodic', content: cmd.content, confidence: 1, tier: 1, ownerId: null,
      episodeId: cmd.episodeId, seq, role: cmd.role, context: previous?.content ?? '',
      links: participants.map((p) => ({ entityId: p.entity_id, relation: 'participant' as const })),
    });
    await tx`UPDATE episodes SET last_activity_at = ${now}, message_count = message_count + 1 WHERE id = ${cmd.episodeId}`;
    return { status: 'ok' };
  }

  async endEpisode(cmd: CommandOf<'endEpisode'>, tx: Tx): Promise<WriterResults['endEpisode']> {
    const episode = await this.episode(tx, cmd.episodeId);
    if (!episode) throw fail.episodeNotFound(cmd.episodeId);
    if (episode.ended_at !== null) throw fail.episodeEnded(cmd.episodeId);
    await tx`UPDATE episodes SET ended_at = ${this.now()}, outcome = ${cmd.outcome} WHERE id = ${cmd.episodeId}`;
    // Extraction ran on a snapshot; if a delete removed (or is removing) a turn it read, storing
    // its output would bring forgotten data back.
    const [present] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM memories WHERE id = ANY(${cmd.sourceIds}::text[])`;
    if (present!.n !== cmd.sourceIds.length) return { memories_created: 0 };
    if (await this.deletes.anySourceHeld(tx, cmd.sourceIds)) return { memories_created: 0 };
    let created = 0;
    for (const memory of cmd.memories) if (await this.storeExtracted(tx, cmd.episodeId, memory)) created++;
    return { memories_created: created };
  }

  private async storeExtracted(tx: Tx, episodeId: string, memory: ExtractedMemory): Promise<boolean> {
    const [ownerName, ...mentioned] = memory.entities;
    if (ownerName === undefined) return false;
    const owner = await this.entity(tx, ownerName);
    const links: NewMemory['links'] = [];
    for (const name of mentioned) {
      if (name !== ownerName) links.push({ entityId: (await this.entity(tx, name)).id, relation: 'mention' });
    }
    return (await this.storeOwned(tx, owner.id, {
      type: memory.memory_type, content: memory.content, confidence: memory.confidence,
      tier: memory.extraction_tier, ownerId: owner.id, episodeId, seq: null, role: null, links,
    })).created;
  }

  private async episode(tx: Tx, id: string) {
    const [row] = await tx<{ last_activity_at: number; ended_at: number | null; message_count: number }[]>`
      SELECT last_activity_at, ended_at, message_count FROM episodes WHERE id = ${id} AND namespace_id = ${this.namespaceId}`;
    return row;
  }

  // ------------------------------------------------------------------ reinforcement

  /** A recalled memory counts as a successful FSRS review: stability grows, last access moves. */
  async reinforce(cmd: CommandOf<'reinforce'>, tx: Tx): Promise<WriterResults['reinforce']> {
    const rowids = [...new Set(cmd.rowids)];
    if (rowids.length === 0) return { reinforced: 0 };
    const states = await tx<{ rowid: number; stability: number; difficulty: number; last_access_at: number }[]>`
      SELECT rowid, stability, difficulty, last_access_at FROM memories
      WHERE rowid = ANY(${rowids}::bigint[]) AND archived = 0`;
    for (const state of states) {
      const stability = reinforcedStability(state.stability, state.difficulty, cmd.at - state.last_access_at);
      await tx`UPDATE memories SET stability = ${stability}, last_access_at = ${Math.max(cmd.at, state.last_access_at)},
        access_count = access_count + 1 WHERE rowid = ${state.rowid}`;
    }
    return { reinforced: states.length };
  }
}
