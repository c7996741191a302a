// Runs the operator CLI (`dist/src/cli/index.js`) as a child process, and prepares databases
// the way an embedder would leave them (a vec0 table with vectors) for the CLI tests.
import { INSERT_VECTOR_SQL, UNASSIGNED_CELL } from '../../src/shared/sql-schema.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Db } from '../../src/shared/db.js';
import { vectorTableSql } from '../../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../../src/writer/sqlite/migrate.js';

export const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The real hashing embedder at 4 dimensions: tiny vectors, and services on these files agree. */
export const TEST_EMBEDDER = 'hash-4';
export const DIMENSIONS = 4;
/** Environment for a service opening a database prepared by prepareVectorDatabase. */
export const VECTOR_ENV = { SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: String(DIMENSIONS) };

/** A migrated database with a vec0 table, as the service leaves it once an embedder ran. */
export function prepareVectorDatabase(path: string, namespace = 'default'): void {
  const db = openDatabase(path, { readonly: false });
  migrate(db);
  ensureNamespace(db, namespace);
  db.exec(vectorTableSql(DIMENSIONS));
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedder', ?)").run(TEST_EMBEDDER);
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_dimensions', ?)").run(String(DIMENSIONS));
  db.close();
}

/** A deterministic vector per memory id (exactly representable in float32). */
export function vectorFor(id: string): number[] {
  const seed = parseInt(id.slice(0, 6), 16);
  return Array.from({ length: DIMENSIONS }, (_, i) => ((seed >> (i * 5)) % 32) / 32 - 0.5);
}

/** Gives every memory without one a vector (service stopped: the test is the only writer). */
export function embedAll(path: string): number {
  const db = openDatabase(path, { readonly: false });
  const rows = db.prepare(`SELECT m.rowid AS rowid, m.id AS id, m.namespace_id AS ns FROM memories m
    WHERE m.rowid NOT IN (SELECT rowid FROM memory_vectors)`).all() as { rowid: number; id: string; ns: number }[];
  // As the service stores them before the IVF index places them: cell 0, marked embedded.
  const insert = db.prepare(INSERT_VECTOR_SQL);
  const mark = db.prepare('UPDATE memories SET embedded = 1, vector_cell = 0 WHERE rowid = ?');
  db.transaction(() => {
    for (const r of rows) {
      insert.run(BigInt(r.rowid), BigInt(r.ns), BigInt(UNASSIGNED_CELL), Buffer.from(new Float32Array(vectorFor(r.id)).buffer));
      mark.run(r.rowid);
    }
  })();
  db.close();
  return rows.length;
}

/** Everything a restore or import may touch, keyed by public ids (rowids are local). */
export function dump(path: string): Record<string, unknown> {
  const db: Db = openDatabase(path, { readonly: true });
  try {
    const hasVectors = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_vectors'").get() !== undefined;
    return {
      namespaces: db.prepare('SELECT name, created_at FROM namespaces ORDER BY name').all(),
      entities: db.prepare('SELECT e.*, n.name AS ns FROM entities e JOIN namespaces n ON n.id = e.namespace_id ORDER BY e.id').all()
        .map(({ namespace_id: _n, ...row }: any) => row),
      episodes: db.prepare('SELECT * FROM episodes ORDER BY id').all().map(({ namespace_id: _n, ...row }: any) => row),
      participants: db.prepare('SELECT * FROM episode_participants ORDER BY episode_id, entity_id').all(),
      // restored_at is the one column a restore sets (the memory's history tells it: test/event-time.test.ts).
      memories: db.prepare('SELECT * FROM memories ORDER BY id').all().map(({ rowid: _r, namespace_id: _n, restored_at: _at, vector_seq: _seq, ...row }: any) => row),
      links: db.prepare(`SELECT m.id AS memory_id, l.entity_id, l.relation FROM memory_entities l
        JOIN memories m ON m.rowid = l.memory_rowid ORDER BY m.id, l.entity_id`).all(),
      vectors: hasVectors
        ? db.prepare('SELECT m.id AS id, v.embedding AS embedding FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid ORDER BY m.id').all()
          .map((r: any) => ({ id: r.id, embedding: Array.from(new Float32Array(r.embedding.buffer, r.embedding.byteOffset, r.embedding.byteLength / 4)) }))
        : null,
      fts: db.prepare("SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH 'a* OR e* OR i* OR o* OR t*'").get(),
    };
  } finally {
    db.close();
  }
}
