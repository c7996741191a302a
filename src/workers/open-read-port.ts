// Which storage this pool thread reads: the SQLite file beside the writer (read-only connection)
// or PostgreSQL (the primary, and the replicas recall prefers when SERVICE_READ_DATABASE_URL is set).
import type { Config } from '../shared/config.js';
import { openDatabase } from '../shared/db.js';
import { embedderIdentity } from './embedding/index.js';
import type { ReadPort } from './read-port.js';
import { SqliteReadPort } from './sqlite-read-port.js';
import { connectReader } from './postgres/client.js';
import { PostgresReadPort } from './postgres/read-port.js';
import { replicaConnectMs } from '../shared/postgres-url.js';

export interface OpenedReadPort {
  port: ReadPort;
  close(): Promise<void>;
}

export function openReadPort(config: Config, namespaceId: number): OpenedReadPort {
  const minSimilarity = config.vectorMinSimilarity ?? embedderIdentity(config).minSimilarity;
  const pg = config.postgres;
  if (pg) {
    const sql = connectReader(pg.url, { max: pg.poolConnections });
    // A replica that does not answer must not hold a recall long: bounded connects (the URL's
    // connect_timeout when it sets one), then the primary serves (postgres/replica.ts).
    const connectMs = pg.readUrl ? replicaConnectMs(pg.readUrl) : 0;
    const replicaSql = pg.readUrl ? connectReader(pg.readUrl, { max: pg.poolConnections, connectTimeoutSeconds: connectMs / 1000 }) : null;
    const port = new PostgresReadPort(sql, namespaceId, config.namespace, {
      minSimilarity,
      vectorProbes: config.vectorIndexProbes,
      replica: replicaSql ? { sql: replicaSql, maxLagMs: pg.readMaxLagMs, connectMs } : undefined,
    });
    return {
      port,
      close: async () => { await Promise.all([sql.end({ timeout: 1 }), replicaSql?.end({ timeout: 1 })]); },
    };
  }
  const db = openDatabase(config.dbPath, { readonly: true, mmapBytes: config.readMmapBytes });
  const port = new SqliteReadPort(db, namespaceId, config.namespace, { minSimilarity, vectorProbes: config.vectorIndexProbes, config });
  return { port, close: async () => { db.close(); } };
}
