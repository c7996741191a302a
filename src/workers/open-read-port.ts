// Which storage this pool thread reads: the SQLite file beside the writer (read-only connection)
// or PostgreSQL (the primary, and the replicas recall prefers when SERVICE_READ_DATABASE_URL is set).
import type { Config } from '../shared/config.js';
import { openDatabase, unmapped, type Db } from '../shared/db.js';
import { embedderIdentity } from './embedding/index.js';
import type { ReadPort } from './port/read-port.js';
import type { NamespacesResult } from '../shared/schemas.js';
import { SqliteReadPort, type ConnectionTurns } from './sqlite/read-port.js';
import { connectReader } from './postgres/client.js';
import { PostgresReadPort } from './postgres/read-port.js';
import { replicaConnectMs } from '../shared/postgres-url.js';
import { ReplaceableSql } from '../shared/replaceable-sql.js';
import { failureCause, isConnectionFailure } from '../shared/postgres-errors.js';
import { answersWithin, PrimaryWatch, primaryOrReplica } from './postgres/primary-watch.js';
import { withinPrimaryBound, type PrimaryCheck } from './postgres/primary-bound.js';

/** The namespaces of the database, as a pool thread reads them (never creating one). */
export interface NamespaceDirectory {
  /** The namespace's id; undefined when it does not exist (yet). */
  idOf(name: string): Promise<number | undefined>;
  /** Every namespace's name, in creation order. */
  names(): Promise<string[]>;
  /** The namespaces with memories waiting for a vector. */
  pending(): Promise<string[]>;
  /** `limit` namespaces from `offset` (creation order) with the counts GET /v1/stats gives, and how many there are. */
  page(limit: number, offset: number): Promise<NamespacesResult>;
}

// The listing's counts, as each namespace's stats (workers/sqlite/read-store.ts) count them, in
// one statement for the page: each count is a range of an index keyed by namespace.
const NAMESPACE_PAGE_SQL = `SELECT n.name AS namespace,
    (SELECT count(*) FROM entities e WHERE e.namespace_id = n.id) AS entities,
    (SELECT count(*) FROM memories m WHERE m.namespace_id = n.id AND m.archived = 0 AND m.memory_type = 'episodic') AS episodic_memories,
    (SELECT count(*) FROM memories m WHERE m.namespace_id = n.id AND m.archived = 0 AND m.memory_type = 'semantic') AS semantic_memories,
    (SELECT count(*) FROM memories m WHERE m.namespace_id = n.id AND m.archived = 0 AND m.memory_type = 'procedural') AS procedural_memories
  FROM namespaces n ORDER BY n.id`;

/** Per-namespace caches a PostgreSQL port keeps beyond the service's own namespace (bounded in total by the ports kept). */
const OTHER_NAMESPACE_VECTOR_CACHE_BYTES = 4 * 1024 * 1024;

export interface OpenedReadPorts {
  /** A read port for one namespace, over this thread's connection(s). */
  portFor(namespaceId: number, namespace: string): ReadPort;
  directory: NamespaceDirectory;
  close(): Promise<void>;
  /**
   * PostgreSQL with replicas: whether `error` is the primary lost (a failover), after which the
   * port's reads go to the replicas, so the task can run again there.
   */
  primaryLost?: (error: unknown) => boolean;
  /**
   * Runs `work` with this thread's SQLite connection reading through the page cache, not the
   * memory map (shared/db.ts unmapped): for reads touched once, such as the warm-up. PostgreSQL: as is.
   */
  unmappedDuring<T>(work: () => Promise<T>): Promise<T>;
}

export function openReadPorts(config: Config): OpenedReadPorts {
  const minSimilarity = config.vectorMinSimilarity ?? embedderIdentity(config).minSimilarity;
  const pg = config.postgres;
  if (pg) {
    // Replaceable clients: a connection the client spoils on a failover is replaced under the
    // port (shared/postgres-client-guard.ts) instead of ending this thread or hanging a recall.
    // A replica that does not answer must not hold a recall long: bounded connects (the URL's
    // connect_timeout when it sets one), then the primary serves (postgres/replica.ts).
    const connectMs = replicaConnectMs(pg.readUrl ?? pg.url);
    let watch: PrimaryWatch | null = null;
    // With replicas, the primary's connects are bounded too: while it is gone, reads move to them.
    const primary = new ReplaceableSql((onClose) => connectReader(pg.url, {
      max: pg.poolConnections, onClose, ...(pg.readUrl ? { connectTimeoutSeconds: connectMs / 1000 } : {}),
    }), () => watch?.suspect(), true);
    const replica = pg.readUrl
      ? new ReplaceableSql((onClose) => connectReader(pg.readUrl!, { max: pg.poolConnections, connectTimeoutSeconds: connectMs / 1000, onClose }), () => {}, true)
      : null;
    // With replicas, reads go on from them while the primary does not answer (a failover).
    // Once the primary is found gone, its client is replaced: queries waiting on it in the client's
    // reconnect loop fail at once (and run again on the replicas) instead of at the connect bound.
    watch = replica ? new PrimaryWatch(primary.sql, connectMs, () => primary.replace('primary lost')) : null;
    const sql = replica && watch ? primaryOrReplica(primary.sql, replica.sql, watch) : primary.sql;
    // Recall's reads on the primary (its snapshot, the namespace lookup before it) are bounded
    // like a replica read (postgres/primary-bound.ts): a hung connection to a primary that no
    // longer answers fails the read instead of holding the recall forever.
    const primaryCheck: PrimaryCheck = {
      boundMs: pg.readMaxLagMs + connectMs,
      answers: async () => {
        const probe = connectReader(pg.url, { max: 1, connectTimeoutSeconds: connectMs / 1000 });
        try {
          return await answersWithin(probe, connectMs);
        } finally {
          probe.end({ timeout: 0 }).catch(() => {});
        }
      },
      // With replicas the watch drops the client and moves reads to them; without, it is dropped here.
      lost: (error) => (watch ? watch.suspect(error) : primary.replace(failureCause(error))),
    };
    const portFor = (namespaceId: number, namespace: string) => new PostgresReadPort(sql, namespaceId, namespace, {
      minSimilarity,
      vectorProbes: config.vectorIndexProbes,
      replica: replica ? { sql: replica.sql, maxLagMs: pg.readMaxLagMs, connectMs, replace: (reason) => replica.replace(reason) } : undefined,
      primary: primary.sql,
      watch,
      primaryCheck,
      ...(namespace === config.namespace ? {} : { vectorCacheBytes: OTHER_NAMESPACE_VECTOR_CACHE_BYTES }),
    });
    const directory: NamespaceDirectory = {
      idOf: async (name) => (await withinPrimaryBound(sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${name}`, primaryCheck))[0]?.id,
      names: async () => (await sql<{ name: string }[]>`SELECT name FROM namespaces ORDER BY id`).map((row) => row.name),
      pending: async () => (await sql<{ name: string }[]>`SELECT n.name FROM namespaces n
        WHERE EXISTS (SELECT 1 FROM memories m WHERE m.namespace_id = n.id AND m.embedded = 0) ORDER BY n.id`).map((row) => row.name),
      page: async (limit, offset) => {
        // count(*) is a bigint: postgres.js hands it over as text.
        const [namespaces, [{ total }]] = await Promise.all([
          sql<Record<string, string>[]>`${sql.unsafe(NAMESPACE_PAGE_SQL)} LIMIT ${limit} OFFSET ${offset}`,
          sql<{ total: string }[]>`SELECT count(*) AS total FROM namespaces`,
        ]);
        return {
          namespaces: namespaces.map((row) => ({
            namespace: row.namespace, entities: Number(row.entities), episodic_memories: Number(row.episodic_memories),
            semantic_memories: Number(row.semantic_memories), procedural_memories: Number(row.procedural_memories),
          })),
          total: Number(total),
        };
      },
    };
    return {
      portFor,
      directory,
      primaryLost: (error) => {
        if (!watch || !isConnectionFailure(error)) return false;
        watch.suspect(error);
        return true;
      },
      close: async () => {
        watch?.close();
        await Promise.all([primary.end({ timeout: 1 }), replica?.end({ timeout: 1 })]);
      },
      unmappedDuring: (work) => work(),
    };
  }
  const db = openDatabase(config.dbPath, { readonly: true, mmapBytes: config.readMmapBytes });
  // Every namespace's port reads this one connection, so they take turns on it together.
  const turns: ConnectionTurns = { turn: Promise.resolve() };
  const portFor = (namespaceId: number, namespace: string) =>
    new SqliteReadPort(db, namespaceId, namespace, { minSimilarity, vectorProbes: config.vectorIndexProbes, vectorCodes: config.vectorCodesBytes > 0, config: { ...config, namespace }, turns });
  const idOf = db.prepare<[string], number>('SELECT id FROM namespaces WHERE name = ?').pluck();
  const names = db.prepare<[], string>('SELECT name FROM namespaces ORDER BY id').pluck();
  const pending = db.prepare<[], string>(`SELECT n.name FROM namespaces n
    WHERE EXISTS (SELECT 1 FROM memories m WHERE m.namespace_id = n.id AND m.embedded = 0) ORDER BY n.id`).pluck();
  const namespaceTotal = namespaceCount(db);
  const namespacePage = db.prepare<[number, number], NamespacesResult['namespaces'][number]>(`${NAMESPACE_PAGE_SQL} LIMIT ? OFFSET ?`);
  // Ids 1..total with none missing (namespaceCount): the page starts at a seek, not past `offset` rows.
  const namespacePageFrom = db.prepare<[number, number], NamespacesResult['namespaces'][number]>(
    NAMESPACE_PAGE_SQL.replace('FROM namespaces n ORDER BY', 'FROM namespaces n WHERE n.id > ? ORDER BY') + ' LIMIT ?');
  // Between a recall's BEGIN and COMMIT these would read inside its snapshot: they take their turn too.
  const inTurn = <T>(read: () => T): Promise<T> => {
    const result = turns.turn.then(read, read);
    turns.turn = result.catch(() => {});
    return result;
  };
  const directory: NamespaceDirectory = {
    idOf: (name) => inTurn(() => idOf.get(name)),
    names: () => inTurn(() => names.all()),
    pending: () => inTurn(() => pending.all()),
    page: (limit, offset) => inTurn(() => {
      const { total, dense } = namespaceTotal();
      return { namespaces: dense ? namespacePageFrom.all(offset, limit) : namespacePage.all(limit, offset), total };
    }),
  };
  const unmappedDuring = async <T>(work: () => Promise<T>): Promise<T> => {
    const remap = await inTurn(() => unmapped(db));
    try {
      return await work();
    } finally {
      await inTurn(remap);
    }
  };
  return { portFor, directory, close: async () => { db.close(); }, unmappedDuring };
}

/**
 * How many namespaces the file holds, kept per connection: namespaces are only ever added (the
 * one writer inserts each with the next row id, and none is deleted), so the count grows by the
 * rows above the highest id seen, found by a seek — a listing's page costs what it returns, not
 * a pass over the table. `dense`: the ids are exactly 1..total (the writer never skips one), so
 * position `offset` is id `offset + 1`. Were namespaces ever deleted, this would have to change.
 */
function namespaceCount(db: Db): () => { total: number; dense: boolean } {
  const newer = db.prepare<[number], { count: number; highest: number | null }>('SELECT count(*) AS count, max(id) AS highest FROM namespaces WHERE id > ?');
  let total = 0;
  let highest = 0;
  return () => {
    const added = newer.get(highest)!;
    if (added.count > 0) {
      total += added.count;
      highest = added.highest!;
    }
    return { total, dense: total === highest };
  };
}
