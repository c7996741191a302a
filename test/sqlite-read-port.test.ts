// The SQLite read port shared by several tasks on one pool thread (Piscina runs up to four per
// thread): their reads take turns on the one connection, so none reads inside another's
// recall snapshot and none leaves a statement or a transaction open for the next.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { queryTerms } from '../src/workers/recall/query-text.js';
import { withinBudget } from '../src/workers/port/response-budget.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { post, startTestService, type TestService } from './support/service.js';

const BUDGET = 1_000_000;

describe('SQLite read port: tasks sharing a pool thread', () => {
  let t: TestService;
  let db: Db;
  let port: SqliteReadPort;
  let engine: RecallEngine;
  const remember = (fact: string) => post(t.base, '/v1/remember', { entity: 'ava', fact });
  const activeMemories = async () => { const s = await port.stats(); return s.semantic_memories; };

  before(async () => {
    t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_EMBEDDING_DIMENSIONS: '32' });
    for (let i = 0; i < 30; i++) assert.equal((await remember(`Ava likes sailing number ${i}`)).status, 201);
    db = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
    const namespaceId = db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
    port = new SqliteReadPort(db, namespaceId, 'default', { minSimilarity: 0.2 });
    engine = new RecallEngine(port);
  });
  after(async () => {
    db?.close();
    await t?.close();
  });

  // worker.ts's inspect, as the handler reads
  async function inspect(): Promise<number> {
    const entity = (await port.entity('ava'))!;
    return withinBudget(await port.entityMemories(entity.id, 50, BUDGET), (row) => row.content, BUDGET).kept.length;
  }
  const recall = async () => (await engine.recallWithin({ query: 'sailing', entity: null, types: null, limit: 5, queryVector: null }, BUDGET)).kept.length;

  test('inspect, inspect and recall started in the same tick all answer as they do alone', async () => {
    const alone = [await inspect(), await inspect(), await recall()];
    for (let round = 0; round < 5; round++) {
      assert.deepEqual(await Promise.all([inspect(), inspect(), recall()]), alone);
      assert.deepEqual(await Promise.all([recall(), inspect(), recall(), inspect()]), [alone[2], alone[0], alone[2], alone[0]]);
    }
    assert.equal(db.inTransaction, false);
  });

  test('a lookup queued during a recall sees a write acknowledged before it, not the recall\'s older snapshot', async () => {
    const before = await activeMemories();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const recalling = port.snapshot(async (reads) => {
      await reads.lexical({ query: 'sailing', terms: queryTerms('sailing'), queryVector: null, queryEntityIds: [], filter: { entityId: null, types: null }, depth: 10, now: Date.now() });
      await gate; // the recall's snapshot is open from here on
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await remember('Ava bought a new jib')).status, 201);
    const counted = activeMemories();
    release();
    await recalling;
    assert.equal(await counted, before + 1);
  });

  test('a failed COMMIT leaves no transaction open: the next read ends it and sees new writes', async () => {
    let open: IterableIterator<unknown> | undefined;
    // A statement still stepping when the snapshot ends makes its COMMIT (and ROLLBACK) fail.
    const answer = await port.snapshot(async () => {
      open = db.prepare('SELECT rowid FROM memories').iterate();
      open.next();
      return 'read';
    });
    assert.equal(answer, 'read');
    open!.return!();
    const before = await activeMemories();
    assert.equal(db.inTransaction, false);
    assert.equal((await remember('Ava sold her old dinghy')).status, 201);
    assert.equal(await activeMemories(), before + 1);
    assert.equal(await recall(), 5);
    assert.equal(db.inTransaction, false);
  });
});
