// Lexical scores are a namespace's own (issue 25 review): BM25's N, document frequencies and
// average length come from the caller's namespace, so another tenant's words neither move this
// tenant's ranking nor show in its explained scores. Runs on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { post, startTestService, tempDir, type TestService } from './support/service.js';
import { onPostgres } from './support/test-backend.js';
import { untilEmbedded } from './support/embedded.js';
import { memoryInserter } from './support/rows.js';
import { openDatabase } from '../src/shared/db.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { docSizeTokens } from '../src/shared/fts-doc-size.js';

const A = { 'Memory-Namespace': 'tenant-a' };
const B = { 'Memory-Namespace': 'tenant-b' };
const QUERY = 'apricot orchard harvest';

let t: TestService;
before(async () => {
  t = await startTestService();
  const facts = [
    'Lena keeps an apricot orchard by the river',
    'Lena sells apricot jam at the market',
    'the orchard harvest starts in July, Lena says',
    'Lena walks the dog along the canal every morning',
    'Lena once planted an apricot tree, a fig tree and an apricot hedge',
  ];
  for (const fact of facts) assert.equal((await post(t.base, '/v1/remember', { entity: 'lena', fact }, A)).status, 201);
  // The test compares A's recalls before and after B's writes: rank with every vector attached
  // (support/embedded.ts), or one attached between them changes A's order.
  await untilEmbedded(t.service);
});
after(() => t.close());

interface Explained { id: string; explanation: { signals: { signal: string; raw: number | null; rank: number | null }[] } }

/** Each of A's recalled memories with its lexical raw score and rank, in answer order. */
async function lexicalOfA(filter: Record<string, unknown> = {}): Promise<[string, number | null, number | null][]> {
  const r = await post(t.base, '/v1/recall', { query: QUERY, limit: 10, explain: true, ...filter }, A);
  assert.equal(r.status, 200);
  return (r.body.memories as Explained[]).map((m) => {
    const lexical = m.explanation.signals.find((s) => s.signal === 'lexical')!;
    return [m.id, lexical.raw, lexical.rank];
  });
}

test("A's lexical scores are identical whether or not B's memories (full of A's words) exist", async () => {
  const alone = await lexicalOfA();
  const aloneOfEntity = await lexicalOfA({ entity: 'lena' });
  const aloneSemantic = await lexicalOfA({ types: ['semantic'] });
  assert.ok(alone.filter(([, raw]) => raw !== null && raw > 0).length >= 3, 'A has lexical matches');
  // B: many documents with "apricot" (A's rarest word would become common) and long texts
  // (the average length would grow), plus "orchard" everywhere.
  for (let i = 0; i < 40; i++) {
    const fact = `apricot orchard ${i}: ` + 'apricot harvest report with many words about weather soil and trucks '.repeat(1 + (i % 4));
    assert.equal((await post(t.base, '/v1/remember', { entity: `grower-${i % 5}`, fact }, B)).status, 201);
  }
  await untilEmbedded(t.service);
  const beside = await lexicalOfA();
  assert.deepEqual(beside, alone);
  // The entity and type filters take other query paths: the same holds there.
  assert.deepEqual(await lexicalOfA({ entity: 'lena' }), aloneOfEntity);
  assert.deepEqual(await lexicalOfA({ types: ['semantic'] }), aloneSemantic);
  // B's own recall sees B's rows (the namespace's statistics include its own documents).
  const own = await post(t.base, '/v1/recall', { query: QUERY, limit: 5, explain: true }, B);
  assert.equal(own.status, 200);
  assert.equal(own.body.memories.length, 5);
});

test('the per-namespace statistics follow inserts, content changes and deletes (SQLite triggers)', { skip: onPostgres }, () => {
  const dir = tempDir();
  const db = openDatabase(join(dir, 'stats.db'), { readonly: false });
  try {
    migrate(db);
    const first = ensureNamespace(db, 'one');
    const second = ensureNamespace(db, 'two');
    const insertOne = memoryInserter(db, first);
    const insertTwo = memoryInserter(db, second);
    const long = 'word '.repeat(300); // a 2-byte varint column size
    const rows = [insertOne({ id: 'a', content: 'short text' }), insertOne({ id: 'b', content: long }), insertTwo({ id: 'c', content: 'naïve café owners' })];
    db.prepare("UPDATE memories SET context = 'the previous turn, said before' WHERE rowid = ?").run(rows[0]);
    db.prepare("UPDATE memories SET content = ? WHERE rowid = ?").run('x '.repeat(20000), rows[2]); // a 3-byte size
    insertTwo({ id: 'd', content: 'gone soon' });
    db.prepare("DELETE FROM memories WHERE id = 'd'").run();
    const actual = db.prepare(`SELECT m.namespace_id AS ns, count(*) AS documents
      FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid GROUP BY m.namespace_id ORDER BY ns`).all() as { ns: number; documents: number }[];
    const tokens = (ns: number) => (db.prepare('SELECT d.sz FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid WHERE m.namespace_id = ?')
      .pluck().all(ns) as Buffer[]).reduce((sum, sz) => sum + docSizeTokens(sz), 0);
    const stats = db.prepare('SELECT namespace_id AS ns, documents, tokens FROM namespace_text_stats ORDER BY ns').all();
    assert.deepEqual(stats, actual.map(({ ns, documents }) => ({ ns, documents, tokens: tokens(ns) })));
    assert.deepEqual(stats, [{ ns: first, documents: 2, tokens: 2 + 300 + 5 }, { ns: second, documents: 1, tokens: 20000 }]);
  } finally {
    db.close();
  }
});
