// Per-namespace state costs what a namespace's own state is, not a set of prepared statements
// (issue 25: 1,000 tenants in the memory of one large namespace): every namespace's read port and
// writer row port on a connection share its statements, the namespace bound as a parameter. Proven
// on real files: ports made after the first prepare nothing, and each still reads and writes its
// own namespace only. Also the backfill's rounds of several namespaces keep the one-by-one order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { onConnection, prepareOnce } from '../src/shared/connection-statements.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { SqliteRows } from '../src/writer/sqlite/rows.js';
import { runNow } from '../src/writer/commands/run.js';
import { NamespaceRounds } from '../src/core/jobs/namespace-rounds.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

/** Counts the statements prepared on `db` from now on (the real prepare runs). */
function countPrepares(db: Db): () => number {
  let count = 0;
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    count++;
    return prepare(sql);
  }) as Db['prepare'];
  return () => count;
}

function migratedFile(): { path: string; db: Db } {
  const path = join(tempDir('conn-stmts-'), 'memory.db');
  const db = openDatabase(path, { readonly: false });
  migrate(db);
  prepareVectorTable(db, { id: 'hash-4', dimensions: 4 }, false);
  return { path, db };
}

test('prepareOnce: one statement per connection, text and mode', () => {
  const { db } = migratedFile();
  const other = migratedFile().db;
  const sql = 'SELECT count(*) AS n FROM namespaces';
  const rows = prepareOnce(db, sql);
  assert.equal(prepareOnce(db, sql), rows);
  const plucked = prepareOnce(db, sql, 'pluck');
  assert.notEqual(plucked, rows, 'pluck changes what a statement returns: its own statement');
  assert.deepEqual(rows.get(), { n: 0 });
  assert.equal(plucked.get(), 0);
  assert.deepEqual(prepareOnce(db, sql, 'raw').get(), [0]);
  assert.notEqual(prepareOnce(other, sql), rows, 'another connection prepares its own');
  assert.equal(onConnection(db, 'owner', () => ({ made: 1 })), onConnection(db, 'owner', () => ({ made: 2 })));
  assert.notEqual(onConnection(db, 'owner', () => ({})), onConnection(db, 'another owner', () => ({})));
  db.close();
  other.close();
});

test('read ports of many namespaces share one set of statements and read their own rows only', async () => {
  const { path, db: writer } = migratedFile();
  const names = Array.from({ length: 40 }, (_, i) => `tenant-${i}`);
  const ids = names.map((name) => ensureNamespace(writer, name));
  ids.forEach((id, i) => {
    const insert = memoryInserter(writer, id);
    for (let j = 0; j <= i % 5; j++) insert({ id: `m-${id}-${j}`, content: `note ${j} of ${names[i]}` });
  });
  const db = openDatabase(path, { readonly: true });
  const prepared = countPrepares(db);
  const ports = ids.map((id, i) => new SqliteReadPort(db, id, names[i]!, { minSimilarity: 0.3 }));
  const first = prepared();
  assert.ok(first > 0);
  // Every port reads, and the ports made after the first prepare nothing of their own.
  for (const [i, port] of ports.entries()) {
    const stats = await port.stats();
    assert.equal(stats.semantic_memories, (i % 5) + 1, `${names[i]} counts its own memories only`);
    const waiting = await port.unembedded(100);
    assert.equal(waiting.length, (i % 5) + 1);
    assert.ok(waiting.every((row) => row.content.endsWith(` of ${names[i]}`)), `${names[i]} reads its own rows only`);
  }
  const afterFirstReads = prepared();
  for (const [i, id] of ids.entries()) new SqliteReadPort(db, id, names[i]!, { minSimilarity: 0.3 });
  for (const port of ports) await port.stats();
  assert.equal(prepared(), afterFirstReads, 'a namespace\'s port prepares nothing another namespace\'s did');
  db.close();
  writer.close();
});

test('writer row ports of many namespaces share one set of statements and write their own namespace', () => {
  const { db } = migratedFile();
  const prepared = countPrepares(db);
  const ids = Array.from({ length: 30 }, (_, i) => ensureNamespace(db, `tenant-${i}`));
  const rows = ids.map((id) => new SqliteRows(db, id, () => 1_000));
  const afterFirst = prepared();
  for (const id of ids) new SqliteRows(db, id, () => 1_000);
  assert.equal(prepared(), afterFirst, 'a namespace\'s row port prepares nothing another namespace\'s did');
  rows.forEach((port, i) => runNow(port.insertEntity({ id: `e-${ids[i]}`, name: 'maria', kind: 'user' }, 1_000)));
  // The same name in every namespace: each port finds its namespace's entity.
  rows.forEach((port, i) => assert.equal(runNow(port.entityByName('maria'))?.id, `e-${ids[i]}`));
  db.close();
});

test('NamespaceRounds.nextFew: the next namespaces in turn, each once, moved to the back', () => {
  const rounds = new NamespaceRounds();
  for (const name of ['a', 'b', 'c', 'd', 'e']) rounds.add(name);
  assert.deepEqual(rounds.nextFew(2), ['a', 'b']);
  assert.deepEqual(rounds.nextFew(2), ['c', 'd']);
  // Fewer waiting than asked for: each once, never twice in a turn.
  rounds.done('a');
  rounds.done('c');
  assert.deepEqual(rounds.nextFew(10), ['e', 'b', 'd']);
  assert.deepEqual(rounds.nextFew(1), ['e']);
  assert.equal(rounds.next(), 'b');
  assert.deepEqual(new NamespaceRounds().nextFew(4), []);
});
