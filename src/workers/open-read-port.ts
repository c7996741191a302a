// Which storage this pool thread reads: the SQLite file beside the writer (read-only connection)
// or PostgreSQL (the primary, and the replicas recall prefers when SERVICE_READ_DATABASE_URL is set).
import type { Config } from '../shared/config.js';
import { openDatabase } from '../shared/db.js';
import { embedderIdentity } from './embedding/index.js';
import type { ReadPort } from './port/read-port.js';
import { SqliteReadPort } from './sqlite/read-port.js';
import { connectReader } from './postgres/client.js';
import { PostgresReadPort } from './postgres/read-port.js';
import { replicaConnectMs } from '../shared/postgres-url.js';
import { ReplaceableSql } from '../shared/replaceable-sql.js';
import { isConnectionFailure } from '../shared/postgres-errors.js';
import { PrimaryWatch, primaryOrReplica } from './postgres/primary-watch.js';

export interface OpenedReadPort {
  port: ReadPort;
  close(): Promise<void>;
  /**
   * PostgreSQL with replicas: whether `error` is the primary lost (a failover), after which the
   * port's reads go to the replicas, so the task can run again there.
   */
  primaryLost?: (error: unknown) => boolean;
}

export function openReadPort(config: Config, namespaceId: number): OpenedReadPort {
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
    const port = new PostgresReadPort(sql, namespaceId, config.namespace, {
      minSimilarity,
      vectorProbes: config.vectorIndexProbes,
      replica: replica ? { sql: replica.sql, maxLagMs: pg.readMaxLagMs, connectMs, replace: (reason) => replica.replace(reason) } : undefined,
      primary: primary.sql,
      watch,
    });
    return {
      port,
      primaryLost: (error) => {
        if (!watch || !isConnectionFailure(error)) return false;
        watch.suspect(error);
        return true;
      },
      close: async () => {
        watch?.close();
        await Promise.all([primary.end({ timeout: 1 }), replica?.end({ timeout: 1 })]);
      },
    };
  }
  const db = openDatabase(config.dbPath, { readonly: true, mmapBytes: config.readMmapBytes });
  const port = new SqliteReadPort(db, namespaceId, config.namespace, { minSimilarity, vectorProbes: config.vectorIndexProbes, config });
  return { port, close: async () => { db.close(); } };
}
