// What the PostgreSQL rows keep between commands: this node's cache of committed entities, and
// the memories table's columns (the restore copies every one).
import type { EntityRecord } from '../../shared/schemas.js';
import { BoundedMap } from '../../shared/bounded-map.js';

/** Entities remembered, all namespaces together (least recently used dropped first). */
export const ENTITY_CACHE_MAX = 10_000;

/**
 * The writer's one entity cache, shared by every namespace's PgRowState: the bound is the
 * writer's total, however many namespaces it writes (a bound per namespace would be
 * NAMESPACE_CONTEXTS times as large). Keyed by namespace id and name.
 */
export class EntityCache {
  private readonly entries = new BoundedMap<string, EntityRecord>(ENTITY_CACHE_MAX);

  get size(): number {
    return this.entries.size;
  }

  get(namespaceId: number, name: string): EntityRecord | undefined {
    return this.entries.get(`${namespaceId}:${name}`);
  }

  set(namespaceId: number, entity: EntityRecord): void {
    this.entries.set(`${namespaceId}:${entity.name}`, entity);
  }

  delete(namespaceId: number, name: string): void {
    this.entries.delete(`${namespaceId}:${name}`);
  }

  clear(): void {
    this.entries.clear();
  }
}

export class PgRowState {
  /**
   * Entities by name, committed ones only: entities are never changed once created, and deleted
   * only by a DELETE of the entity (dropEntity on this node; another node holding the name meets
   * the foreign-key violation, which drops its cache and runs the write again: adapter.ts) — or
   * when the database itself goes back in time (failover, restore): see forgetEntities.
   */
  private readonly known: EntityCache;
  /** Entities read or created in the running flush; null when the flush runs with savepoints. */
  private flushEntities: EntityRecord[] | null = null;
  memoryColumns: string[] | null = null;

  constructor(readonly namespaceId: number, readonly dimensions: number, readonly now: () => number, known = new EntityCache()) {
    this.known = known;
  }

  cachedEntity(name: string): EntityRecord | undefined {
    return this.known.get(this.namespaceId, name);
  }

  metEntity(entity: EntityRecord): void {
    this.flushEntities?.push(entity);
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
      for (const entity of this.flushEntities) this.known.set(this.namespaceId, entity);
    }
    this.flushEntities = null;
  }

  /** The entity of this name was deleted (by the running flush, which may yet roll back: dropping is safe either way). */
  dropEntity(name: string): void {
    this.known.delete(this.namespaceId, name);
    this.flushEntities = this.flushEntities?.filter((entity) => entity.name !== name) ?? null;
  }

  /**
   * Forgets the cached entities (every namespace's: the cache is shared). Called when a flush met a foreign-key violation (an entity row
   * the cache holds is gone: a failover to a replica that lacked its commit, a restored backup)
   * and when the connection closed (the server it reconnects to may be another one).
   */
  forgetEntities(): void {
    this.known.clear();
  }
}
