// The properties the recall fusion promises, on real SQLite files and a real service:
// - a memory without a vector yet ranks where lexical relevance alone puts it;
// - recalling never reorders later results (nothing ranks on last access);
// - an entity every memory is linked to adds nothing, one that tells memories apart does;
// - a turn next to a matching turn is lifted by it;
// - a file written before migration 6 keeps every memory recallable, with its turns' context;
// - a recall cut to the response budget reads whole rows only up to the budget, in rank order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { INSERT_VECTOR_SQL, MIGRATIONS } from '../src/shared/sql-schema.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../src/writer/sqlite/vector-table.js';
import { SqliteCommands } from '../src/writer/sqlite/adapter.js';
import { loadConfig } from '../src/shared/config.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine, SIGNAL_WEIGHTS, type EngineOptions } from '../src/workers/recall/engine.js';
import { fuseScores } from '../src/workers/recall/fuse.js';
import { memoryInserter, unit } from './support/rows.js';
import { post, startTestService, tempDir, type TestService } from './support/service.js';

const engineOn = (db: Db, options: Partial<EngineOptions> = {}) => {
  const ns = db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
  return new RecallEngine(new SqliteReadPort(db, ns, 'default', { minSimilarity: 0.2 }), options);
};

describe('a memory without a vector', () => {
  let db: Db;
  const QUERY = unit([1, 0, 0, 0]);

  before(() => {
    db = openDatabase(join(tempDir('memrt-fusion-'), 'f.db'), { readonly: false, synchronous: 'NORMAL' });
    migrate(db);
    prepareVectorTable(db, { id: 'hash-4', dimensions: 4 }, false);
    const ns = ensureNamespace(db, 'default');
    const memory = memoryInserter(db, ns);
    const vector = db.prepare(INSERT_VECTOR_SQL);
    const embedded = (id: string, content: string, values: number[]) => {
      const rowid = memory({ id, content, embedded: 1 });
      vector.run(BigInt(rowid), BigInt(ns), 0n, blobOf(unit(values)));
    };
    db.transaction(() => {
      memory({ id: 'fresh', content: 'kayak paddle kayak paddle', embedded: 0 });
      // The second-best lexical match, with the query's own direction as its vector.
      embedded('close', 'kayak paddle and a long list of other things to read', [1, 0, 0, 0]);
      embedded('kayak-far', 'kayak with many more words in it than the others have', [0, 1, 0, 0]);
      for (let i = 0; i < 20; i++) embedded(`filler-${i}`, `unrelated note ${i}`, [0.2, 1, i / 20, 0]);
    })();
  });
  after(() => db.close());

  test('ranks where lexical alone puts it, however close the embedded ones are', async () => {
    const request = { query: 'kayak paddle', entity: null, types: null, limit: 5, queryVector: QUERY };
    const lexical = (await engineOn(db, { only: ['bm25'] }).recall({ ...request, queryVector: null })).map((h) => h.row.id);
    assert.equal(lexical[0], 'fresh', 'the fixture: lexical alone ranks the unembedded memory first');
    const fused = await engineOn(db).recall(request);
    assert.equal(fused[0].row.id, 'fresh');
    // Its score is its lexical score alone (the best, scaled to 1), not a mean with a missing
    // vector; plus the session stage's full weight, as the best "session" (a fact stands for one).
    assert.ok(Math.abs(fused[0].score - 1 - SIGNAL_WEIGHTS.session) < 0.05, `score ${fused[0].score}`);
  });
});

describe('conversations through the service', () => {
  let t: TestService;
  let db: Db;
  const contents: Record<string, string> = {};

  before(async () => {
    t = await startTestService();
    const turns = async (participants: string[], lines: string[]) => {
      const ep = (await post(t.base, '/v1/episodes/start', { participants })).body.episode_id;
      for (const line of lines) await post(t.base, `/v1/episodes/${ep}/message`, { role: 'user', content: line });
    };
    await turns(['Ann', 'Bob'], [
      'Ann: Did you pack the kayak for the lake trip?',
      'Bob: We finally landed in Lisbon after a long delay.',
      'Ann: How were the holidays overall?',
      'Bob: The kayak stayed home, the paddle broke last summer.',
      'Ann: I bought a new paddle for the river.',
      'Bob: The lake trip is in June, we can rent a kayak there.',
      'Ann: My sister says the river is cold in June.',
      'Bob: Then we take wetsuits and a spare paddle.',
    ]);
    await turns(['Ann', 'Bob', 'Cleo'], ['Cleo: I can lend you my kayak for the lake.', 'Ann: Thanks Cleo, a kayak helps.']);
    await t.service.backfill.idle();
    db = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
    for (const row of db.prepare('SELECT id, content FROM memories').all() as { id: string; content: string }[]) contents[row.id] = row.content;
  });
  after(async () => {
    db?.close();
    await t?.close();
  });

  const questions = ['kayak lake trip', 'paddle river June', 'who has a spare paddle', 'Lisbon delay', 'cold river wetsuits', 'kayak rental'];
  const ask = async (query: string) =>
    (await post(t.base, '/v1/recall', { query, limit: 5, types: ['episodic'] })).body.memories.map((m: any) => `${m.id} ${m.score}`);

  test('repeated recalls, in any order, return the same memories with the same scores', async () => {
    const first = new Map<string, string[]>();
    for (const q of questions) first.set(q, await ask(q));
    // Each recall reinforces what it returned (last access, stability) through the writer: wait for that to land.
    const accessed = () => {
      const file = new Database(join(t.dir, 'memory.db'), { readonly: true });
      try {
        return file.prepare('SELECT sum(access_count) FROM memories').pluck().get() as number;
      } finally {
        file.close();
      }
    };
    const deadline = Date.now() + 5000;
    while (accessed() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(accessed() > 0, 'recalls were reinforced: this test would prove nothing otherwise');
    for (const q of [...questions].reverse()) assert.deepEqual(await ask(q), first.get(q), q);
  });

  test('an entity linked to every memory adds nothing; one that tells memories apart does', async () => {
    const run = async (query: string, entity: number) => (await engineOn(db, { weights: { entity } })
      .recall({ query, entity: null, types: ['episodic'], limit: 10, queryVector: null }))
      .map((h) => `${h.row.id} ${h.score.toFixed(9)}`);
    // Ann and Bob take part in every episode: every turn is linked to both.
    assert.deepEqual(await run('What did Ann say about the kayak?', 0.1), await run('What did Ann say about the kayak?', 0));
    // Cleo only in the second episode: her turns gain.
    assert.notDeepEqual(await run('What did Cleo say about the kayak?', 0.1), await run('What did Cleo say about the kayak?', 0));
  });

  test('a turn next to a matching turn is lifted by it', async () => {
    const lisbon = Object.keys(contents).find((id) => contents[id].includes('Lisbon'))!;
    // Reach 1: only the turns right next to a match (at reach 2 the turns two away tie with them).
    const run = async (adjacent: number) => (await engineOn(db, { weights: { adjacent }, reach: 1 })
      .recall({ query: 'holidays', entity: null, types: ['episodic'], limit: 5, queryVector: null }))
      .map((h) => h.row.id);
    // "holidays" is only in the turn after the Lisbon one (context flows forward, so the Lisbon turn has no match of its own).
    assert.ok(!(await run(0)).includes(lisbon), 'the fixture: without neighbours the Lisbon turn is not found');
    assert.ok((await run(0.3)).slice(0, 3).includes(lisbon), 'the turn before the matching one is lifted');
  });
});

describe('migration of a file written before the conversation context', () => {
  test('every memory stays recallable, turns gain their previous turn as context', async () => {
    const dir = tempDir('memrt-migrate-');
    const path = join(dir, 'old.db');
    const old = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
    // The schema as it was at version 5, and rows as that writer stored them.
    for (const sql of MIGRATIONS.slice(0, 5)) old.exec(sql);
    old.pragma('user_version = 5');
    const ns = ensureNamespace(old, 'default');
    old.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-ann', ?, 'Ann', 'user', 0)").run(ns);
    old.prepare("INSERT INTO episodes (id, namespace_id, started_at, last_activity_at, message_count) VALUES ('ep-1', ?, 0, 0, 3)").run(ns);
    old.prepare("INSERT INTO episode_participants (episode_id, entity_id, position) VALUES ('ep-1', 'e-ann', 0)").run();
    const insert = old.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability,
      difficulty, last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role)
      VALUES (?, ?, ?, ?, ?, 1, 1, 5, 0, 0, 1, ?, ?, ?, ?)`);
    const link = old.prepare('INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)');
    const rows = [
      { id: 'turn-0', type: 'episodic', content: 'Ann: the marmot whistled at dawn', episode: 'ep-1', seq: 0 },
      { id: 'turn-1', type: 'episodic', content: 'Ann: then the ibex came down', episode: 'ep-1', seq: 1 },
      { id: 'turn-2', type: 'episodic', content: 'Ann: we left before noon', episode: 'ep-1', seq: 2 },
      { id: 'fact-0', type: 'semantic', content: 'Ann keeps a heron logbook', episode: null, seq: null },
    ];
    for (const r of rows) {
      const rowid = insert.run(r.id, ns, r.type, r.content, r.content, r.episode ? null : 'e-ann', r.episode, r.seq, r.episode ? 'user' : null).lastInsertRowid;
      link.run(rowid, 'e-ann', r.episode ? 'participant' : 'owner');
    }
    old.close();

    const t = await startTestService({ SERVICE_PATH: path });
    try {
      const words = { 'turn-0': 'marmot', 'turn-1': 'ibex', 'turn-2': 'noon', 'fact-0': 'heron' } as Record<string, string>;
      for (const [id, word] of Object.entries(words)) {
        const found = (await post(t.base, '/v1/recall', { query: word, limit: 5 })).body.memories.map((m: any) => m.id);
        assert.ok(found.includes(id), `${id} recallable by "${word}"`);
      }
      const file = new Database(path, { readonly: true });
      try {
        assert.equal(file.pragma('user_version', { simple: true }), MIGRATIONS.length);
        const context = (id: string) => file.prepare('SELECT context FROM memories WHERE id = ?').pluck().get(id);
        assert.equal(context('turn-0'), '');
        assert.equal(context('turn-1'), 'Ann: the marmot whistled at dawn');
        assert.equal(context('fact-0'), '');
        // The context column is searchable: the previous turn's word finds the turn after it.
        const byContext = file.prepare("SELECT m.id FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH 'context : ibex'").pluck().all();
        assert.deepEqual(byContext, ['turn-2']);
      } finally {
        file.close();
      }
    } finally {
      await t.close();
    }
  });
});

describe('mention links', () => {
  test('a turn naming a participant links it both ways', async () => {
    const t = await startTestService();
    try {
      const ep = (await post(t.base, '/v1/episodes/start', { participants: ['Dana', 'Eli'] })).body.episode_id;
      await post(t.base, `/v1/episodes/${ep}/message`, { role: 'user', content: 'Dana: Eli, did you water the ferns?' });
      await t.service.backfill.idle();
      const file = new Database(join(t.dir, 'memory.db'), { readonly: true });
      try {
        const relations = file.prepare(`SELECT e.relation FROM memory_entities e JOIN entities n ON n.id = e.entity_id
          WHERE n.name = 'Eli' ORDER BY e.relation`).pluck().all();
        assert.deepEqual(relations, ['mention', 'participant']);
      } finally {
        file.close();
      }
    } finally {
      await t.close();
    }
  });
});

describe('large candidate sets', () => {
  test('scores of 200k candidates normalise without overflowing the stack', () => {
    const scores = new Map<number, number>();
    for (let i = 0; i < 200_000; i++) scores.set(i, i % 1000);
    const fused = fuseScores(scores.keys(), [{ weight: 1, scores, scale: 'range' }]);
    assert.equal(fused.size, 200_000);
    assert.equal(fused.get(999), 1);
    assert.equal(fused.get(1000), 0);
  });
});

describe('forgetting a turn', () => {
  test('the turn after it keeps no trace of its text as context', () => {
    const db = openDatabase(join(tempDir('memrt-forget-ctx-'), 'f.db'), { readonly: false, synchronous: 'NORMAL' });
    try {
      migrate(db);
      prepareVectorTable(db, { id: 'hash-4', dimensions: 4 }, false);
      const store = new SqliteCommands(db, loadConfig({}), ensureNamespace(db, 'default'));
      const { episode_id: episodeId } = store.run({ type: 'startEpisode', participants: ['Ann', 'Bob'] });
      for (const content of ['Ann: my locker code is 4417', 'Bob: noted', 'Ann: thanks'])
        store.run({ type: 'addMessage', episodeId, role: 'user', content });
      const turn = (seq: number) => db.prepare('SELECT rowid, id, context FROM memories WHERE episode_id = ? AND seq = ?').get(episodeId, seq) as any;
      assert.equal(turn(1).context, 'Ann: my locker code is 4417', 'the fixture: the next turn holds it as context');
      // A message added while an entity's deletion ran is kept (written after its snapshot); the turns the snapshot listed go.
      store.run({ type: 'forgetRows', rows: [[turn(0).rowid, turn(0).id]] });
      assert.equal(turn(1).context, '');
      assert.deepEqual(db.prepare("SELECT rowid FROM memories_fts WHERE memories_fts MATCH '4417'").pluck().all(), []);
      assert.equal(turn(2).context, 'Bob: noted');
    } finally {
      db.close();
    }
  });
});

describe('a recall within the response budget', () => {
  let db: Db;
  const FACTS = 200;
  const FACT_CHARS = 10_000;

  before(() => {
    db = openDatabase(join(tempDir('memrt-fusion-'), 'b.db'), { readonly: false, synchronous: 'NORMAL' });
    migrate(db);
    prepareVectorTable(db, { id: 'hash-4', dimensions: 4 }, false);
    const memory = memoryInserter(db, ensureNamespace(db, 'default'));
    db.transaction(() => {
      for (let i = 0; i < FACTS; i++) memory({ id: `big-${i}`, content: `budget fact ${i} ` + 'z'.repeat(FACT_CHARS) });
    })();
  });
  after(() => db.close());

  test('keeps the rank-order prefix that fits, and reads few more rows than it keeps', async () => {
    // Counts the whole rows (content included) the engine reads from SQLite.
    let rowsRead = 0;
    const counting = new Proxy(db, {
      get(target, key) {
        if (key !== 'prepare') {
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!/m\.content/.test(sql)) return statement;
          return new Proxy(statement, {
            get(inner, name) {
              if (name !== 'all') return Reflect.get(inner, name).bind?.(inner) ?? Reflect.get(inner, name);
              return (...args: unknown[]) => {
                const rows = (inner.all as (...a: unknown[]) => unknown[])(...args);
                rowsRead += rows.length;
                return rows;
              };
            },
          });
        };
      },
    });
    const engine = engineOn(counting);
    const request = { query: 'budget fact', entity: null, types: null, limit: FACTS, queryVector: null };
    const everything = (await engine.recall(request)).map((hit) => hit.row.id);
    assert.equal(everything.length, FACTS);
    rowsRead = 0;
    const budget = 20 * (FACT_CHARS + 300);
    const { kept, truncated } = await engine.recallWithin(request, budget);
    assert.equal(truncated, true);
    assert.ok(kept.length > 0 && kept.length < FACTS, `${kept.length} kept`);
    assert.deepEqual(kept.map((hit) => hit.row.id), everything.slice(0, kept.length));
    assert.ok(rowsRead >= kept.length && rowsRead < kept.length + 20, `${rowsRead} rows read for ${kept.length} kept`);
  });
});
