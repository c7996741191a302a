// What the PostgreSQL rows keep between commands: this node's cache of committed entities, and
// the memories table's columns (the restore copies every one).
import type { EntityRecord } from '../../shared/schemas.js';

/** Entities remembered by name (a bound: the cache starts over when full). */
const ENTITY_CACHE_MAX = 10_000;

export class PgRowState {
  /**
   * Entities by name, committed ones only: entities are never changed once created, and deleted
   * only by a DELETE of the entity (dropEntity on this node; another node holding the name meets
   * the foreign-key violation, which drops its cache and runs the write again: adapter.ts) — or
   * when the database itself goes back in time (failover, restore): see forgetEntities.
   */
  private readonly known = new Map<string, EntityRecord>();
  /** Entities read or created in the running flush; null when the flush runs with savepoints. */
  private flushEntities: EntityRecord[] | null = null;
  memoryColumns: string[] | null = null;

  constructor(readonly namespaceId: number, readonly dimensions: number, readonly now: () => number) {}

  cachedEntity(name: string): EntityRecord | undefined {
    return this.known.get(name);
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
      if (this.known.size + this.flushEntities.length > ENTITY_CACHE_MAX) this.known.clear();
      for (const entity of this.flushEntities) this.known.set(entity.name, entity);
    }
    this.flushEntities = null;
  }

  /** The entity of this name was deleted (by the running flush, which may yet roll back: dropping is safe either way). */
  dropEntity(name: string): void {
    this.known.delete(name);
    this.flushEntities = this.flushEntities?.filter((entity) => entity.name !== name) ?? null;
  }

  /**
   * Forgets the cached entities. Called when a flush met a foreign-key violation (an entity row
   * the cache holds is gone: a failover to a replica that lacked its commit, a restored backup)
   * and when the connection closed (the server it reconnects to may be another one).
   */
  forgetEntities(): void {
    this.known.clear();
  }
}
