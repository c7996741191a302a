// The two adapters of the writer's store port, opened the way the writer thread opens them, for
// the contract suite (test/store-contract.test.ts): a real SQLite file per store, and a real
// PostgreSQL database per store in one private cluster per test file (support/postgres.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { loadConfig, type Config } from '../../src/shared/config.js';
import { openDatabase, type Db } from '../../src/shared/db.js';
import type { WriterCommand, WriterReply, WriterResults } from '../../src/shared/protocol/writer.js';
import { openSqliteWriteStore } from '../../src/writer/sqlite/adapter.js';
import type { BatchOutcome, WriteStorePort } from '../../src/writer/commands/store-port.js';
import { openPostgresWriteStore } from '../../src/writer/postgres/adapter.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './postgres.js';

/** One store under test, plus a way to read its rows with portable SQL (`?` placeholders). */
export interface OpenStore {
  store: WriteStorePort;
  config: Config;
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** PostgreSQL only: the store's database URL and its cluster. */
  url?: string;
  cluster?: PgCluster;
  /**
   * Another writer on the same database, with these settings (e.g. another namespace); closed
   * with this one. On PostgreSQL it is another service node; on SQLite use one at a time.
   */
  another(env?: Record<string, string>): Promise<WriteStorePort>;
  close(): Promise<void>;
}

export interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** Why this backend cannot run here (the suite skips it with this message), or null. */
  readonly unavailable: string | null;
  start(): Promise<void>;
  stop(): Promise<void>;
  open(env?: Record<string, string>): Promise<OpenStore>;
}

export async function runBatch(store: WriteStorePort, commands: WriterCommand[], namespace = store.namespace): Promise<BatchOutcome> {
  return store.runBatch(commands.map((command, i) => ({ id: i + 1, namespace, command })));
}

/** Runs one command in its own flush; a failed command rejects with an error carrying its code. */
export async function run<K extends WriterCommand['type']>(store: WriteStorePort, command: Extract<WriterCommand, { type: K }>): Promise<WriterResults[K]> {
  const [reply] = (await runBatch(store, [command])).replies as [WriterReply];
  if (!reply.ok) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
  return reply.result as WriterResults[K];
}

export function sqliteBackend(): Backend {
  return {
    name: 'sqlite',
    unavailable: null,
    async start() {},
    async stop() {},
    async open(env = {}) {
      const dir = mkdtempSync(join(tmpdir(), 'memrt-contract-'));
      const config = loadConfig({ SERVICE_PATH: join(dir, 'memory.db'), ...env });
      const store = openSqliteWriteStore(config);
      const reader: Db = openDatabase(config.dbPath, { readonly: true, synchronous: 'FULL' });
      const others: WriteStorePort[] = [];
      return {
        store,
        config,
        async rows<T>(sql: string, ...params: unknown[]) {
          return reader.prepare(sql).all(...params) as T[];
        },
        async another(more = {}) {
          const other = openSqliteWriteStore(loadConfig({ SERVICE_PATH: config.dbPath, ...env, ...more }));
          others.push(other);
          return other;
        },
        async close() {
          for (const other of others) await other.close();
          reader.close();
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

export function postgresBackend(): Backend {
  let cluster: PgCluster | null = null;
  let databases = 0;
  return {
    name: 'postgres',
    unavailable: postgresUnavailable(),
    async start() {
      cluster = await startPrimary();
    },
    async stop() {
      await cluster?.stop();
    },
    async open(env = {}) {
      // A database per store: tests do not see each other's rows.
      const name = `contract_${++databases}`;
      await cluster!.sql(`CREATE DATABASE ${name}`);
      const url = cluster!.url.replace(/\/postgres$/, `/${name}`);
      const config = loadConfig({ SERVICE_PATH: join(cluster!.dir, 'unused.db'), ...env });
      const store = await openPostgresWriteStore(url, config);
      const reader = postgres(url, { max: 1, onnotice: () => {}, types: { int8: { to: 20, from: [20], serialize: String, parse: Number } } });
      const others: WriteStorePort[] = [];
      return {
        store,
        config,
        url,
        cluster: cluster!,
        async rows<T>(sql: string, ...params: unknown[]) {
          let n = 0;
          const text = sql.replace(/\?/g, () => `$${++n}`);
          // Plain arrays of plain objects, as better-sqlite3 returns them (a Result is an Array subclass).
          return Array.from(await reader.unsafe(text, params as never[]), (row) => ({ ...row })) as T[];
        },
        async another(more = {}) {
          const other = await openPostgresWriteStore(url, { ...config, ...(more.SERVICE_NAMESPACE ? { namespace: more.SERVICE_NAMESPACE } : {}) });
          others.push(other);
          return other;
        },
        async close() {
          for (const other of others) await other.close();
          await store.close();
          await reader.end();
        },
      };
    },
  };
}
