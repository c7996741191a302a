// Deletes and restores taking turns across nodes (PostgreSQL). On one node DeleteRestoreTurns
// (take-turns.ts) orders them; nodes sharing a database also register each one, for its length,
// in the `open_deletions` table (postgres-schema.ts, migration 4), so that another node's
// conflicting turn — a delete of the same entity, a restore, or a delete while a restore runs —
// waits for it as a turn on the same node would, and is refused (409 ENTITY_BUSY / RESTORE_BUSY,
// naming the node) if it is still running after CLUSTER_TURN_WAIT_MS.
// An entry holds a lease (LEASE_SECONDS, renewed every RENEW_MS while its turn runs): a node
// that crashes or loses the database mid-delete stops renewing, and its entry lapses within a
// minute — no operator step, and the DELETE repeated after the crash (README) soon goes through.
// The lease is short because the renewal runs on the node's main thread, which the deletion
// itself (writer thread, pool) never blocks: a live node renews it four times a lease. Times
// are the database's clock (now()), so nodes' clocks may disagree. Check and insert run in one
// transaction under an advisory lock per namespace, so two nodes never both take conflicting turns.
// Turns are the request's namespace's (by name): another namespace's never conflict with them. A
// namespace that does not exist yet holds nothing to delete, and a restore needs a snapshot of
// its own namespace (which therefore exists), so no turn is registered for one.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { ReplaceableSql } from '../shared/replaceable-sql.js';
import { fail } from '../shared/errors.js';
import { storableText } from '../shared/postgres-text.js';
import type { Logger } from '../shared/logger.js';
import { PG_LOCK_CLASS } from '../shared/postgres-schema.js';

/** A turn taken cluster-wide; release() ends it (idempotent, never throws). */
export interface ClusterTurn {
  release(): Promise<void>;
}

/** Where a node's delete and restore turns are seen by the others (none on SQLite: one node). */
export interface ClusterTurns {
  /** A delete of `entity`, or a restore (null), in `namespace`: resolves once no other node's turn conflicts. */
  take(namespace: string, entity: string | null): Promise<ClusterTurn>;
  close(): Promise<void>;
}

export const LOCAL_CLUSTER_TURNS: ClusterTurns = {
  take: async () => ({ release: async () => {} }),
  close: async () => {},
};

/** A crashed node's entry lapses after this long without renewal. */
export const LEASE_SECONDS = 60;
/** How often a running turn renews its lease. */
const RENEW_MS = 15_000;
/** Longest a turn waits for another node's conflicting one before it is refused. */
export const CLUSTER_TURN_WAIT_MS = 30_000;
/** How often a waiting turn looks again. */
const POLL_MS = 250;

export class PostgresClusterTurns implements ClusterTurns {
  private readonly sql: postgres.Sql;
  /** This process, as other nodes' refusals name it. */
  readonly node = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(url: string, private readonly log: Logger,
    private readonly waitMs = CLUSTER_TURN_WAIT_MS) {
    // Replaceable: a connection the client spoils in a failover is replaced (shared/postgres-client-guard.ts).
    this.sql = new ReplaceableSql((onclose) => postgres(url, { max: 1, idle_timeout: 60, onclose, onnotice: () => {}, connection: { application_name: 'memory-runtime turns' } })).sql;
  }

  async take(namespace: string, entity: string | null): Promise<ClusterTurn> {
    // A name PostgreSQL text cannot hold (U+0000) names no stored entity, so no other node's
    // delete can touch it: no turn to register (the writer then answers 404, as SQLite does).
    if ((entity !== null && !storableText(entity)) || !storableText(namespace)) return { release: async () => {} };
    const id = randomUUID();
    const deadline = performance.now() + this.waitMs;
    for (;;) {
      const holder = await this.tryTake(id, namespace, entity);
      if (holder === undefined) return { release: async () => {} };
      if (holder === null) break;
      if (performance.now() >= deadline) {
        throw entity === null ? fail.restoreBusyElsewhere(holder) : fail.entityBusyElsewhere(entity, holder);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const renew = setInterval(() => void this.renew(id), RENEW_MS);
    renew.unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        // Not deleted (the database is unreachable): the lease lets it lapse.
        await this.sql`DELETE FROM open_deletions WHERE id = ${id}`.catch((error: Error) =>
          this.log.warn({ turn: id, reason: error.message }, `could not end a cluster turn; it lapses within ${LEASE_SECONDS} s`));
      },
    };
  }

  /**
   * Registers the turn and answers null, or answers the node whose turn conflicts; undefined when
   * the namespace does not exist (nothing to take turns over).
   */
  private async tryTake(id: string, namespace: string, entity: string | null): Promise<string | null | undefined> {
    return this.sql.begin(async (tx) => {
      const [row] = await tx<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${namespace}`;
      if (!row) return undefined;
      const namespaceId = row.id;
      await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.openDeletions}::int, ${namespaceId}::int)`;
      await tx`DELETE FROM open_deletions WHERE namespace_id = ${namespaceId} AND lease_until < now()`;
      // A restore conflicts with every turn; a delete with restores and deletes of its entity.
      const [conflict] = await tx<{ node: string }[]>`SELECT node FROM open_deletions WHERE namespace_id = ${namespaceId}
        AND (${entity}::text IS NULL OR entity IS NULL OR entity = ${entity}) LIMIT 1`;
      if (conflict) return conflict.node;
      await tx`INSERT INTO open_deletions (id, namespace_id, entity, node, lease_until)
        VALUES (${id}, ${namespaceId}, ${entity}, ${this.node}, now() + make_interval(secs => ${LEASE_SECONDS}))`;
      return null;
    });
  }

  private async renew(id: string): Promise<void> {
    try {
      const renewed = await this.sql`UPDATE open_deletions SET lease_until = now() + make_interval(secs => ${LEASE_SECONDS}) WHERE id = ${id}`;
      if (renewed.count === 0) this.log.warn({ turn: id }, 'a cluster turn\'s lease had lapsed: other nodes may have started a conflicting delete or restore');
    } catch (error) {
      this.log.warn({ turn: id, reason: (error as Error).message }, 'could not renew a cluster turn\'s lease');
    }
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}
