// `node dist/bench/rule-driver.js`: what writing a writer rule ONCE costs on the SQLite path
// (issue 24). A rule is written against a row-level port; SQLite must run it synchronously
// inside BEGIN IMMEDIATE, PostgreSQL with await. Four ways to run the same `remember` rule
// (entity get-or-create, de-duplication look-up, insert, owner link) over the same prepared
// statements on an in-memory database, 64 commands per transaction as group commit forms them:
// - direct: straight-line synchronous code (what SQLite ran before the rules moved out),
// - yield*: the rule is a generator; each port call is `yield* port.op()`, and the SQLite port's
//   ops are generators that return at once (no suspension),
// - yield: the rule yields each port call's value and the driver hands it straight back,
// In-memory with no fsync, so the rule's own CPU cost is all there is to see: the worst case
// for any overhead. Environment: BENCH_SECONDS (per case, default 2).
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Bench } from 'tinybench';
import { fmt, table } from './lib/report.js';

const seconds = Number(process.env.BENCH_SECONDS?.trim() || '2');
const BATCH = 64;

const db = new Database(':memory:');
db.exec(`CREATE TABLE entities (id TEXT PRIMARY KEY, name TEXT UNIQUE);
  CREATE TABLE memories (rowid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT, entity_id TEXT, content_key TEXT, confidence REAL);
  CREATE INDEX m_by_entity ON memories (entity_id, content_key);
  CREATE TABLE links (memory_rowid INTEGER, entity_id TEXT, PRIMARY KEY (memory_rowid, entity_id));`);
const s = {
  entity: db.prepare<[string], { id: string }>('SELECT id FROM entities WHERE name = ?'),
  insertEntity: db.prepare('INSERT INTO entities (id, name) VALUES (?, ?)'),
  duplicate: db.prepare<[string, string], { rowid: number; confidence: number }>(
    'SELECT rowid, confidence FROM memories WHERE entity_id = ? AND content_key = ? LIMIT 1'),
  insert: db.prepare('INSERT INTO memories (id, entity_id, content_key, confidence) VALUES (?, ?, ?, ?)'),
  link: db.prepare('INSERT OR IGNORE INTO links (memory_rowid, entity_id) VALUES (?, ?)'),
};

type Cmd = { entity: string; fact: string; confidence: number };
type Out = { id: string; created: boolean };

// --- the port, three shapes of the same four operations
const plain = {
  entity: (name: string) => s.entity.get(name)?.id,
  insertEntity: (id: string, name: string) => { s.insertEntity.run(id, name); },
  duplicate: (entityId: string, key: string) => s.duplicate.get(entityId, key),
  insert: (id: string, entityId: string, key: string, confidence: number) => Number(s.insert.run(id, entityId, key, confidence).lastInsertRowid),
  link: (rowid: number, entityId: string) => { s.link.run(rowid, entityId); },
};
const gen = {
  *entity(name: string) { return plain.entity(name); },
  *insertEntity(id: string, name: string) { plain.insertEntity(id, name); },
  *duplicate(entityId: string, key: string) { return plain.duplicate(entityId, key); },
  *insert(id: string, entityId: string, key: string, confidence: number) { return plain.insert(id, entityId, key, confidence); },
  *link(rowid: number, entityId: string) { plain.link(rowid, entityId); },
};

function direct(cmd: Cmd): Out {
  let owner = plain.entity(cmd.entity);
  if (!owner) plain.insertEntity(owner = randomUUID(), cmd.entity);
  const key = cmd.fact.toLowerCase();
  if (plain.duplicate(owner, key)) return { id: owner, created: false };
  const id = randomUUID();
  plain.link(plain.insert(id, owner, key, cmd.confidence), owner);
  return { id, created: true };
}

function* delegating(cmd: Cmd): Generator<unknown, Out, unknown> {
  let owner = yield* gen.entity(cmd.entity);
  if (!owner) yield* gen.insertEntity(owner = randomUUID(), cmd.entity);
  const key = cmd.fact.toLowerCase();
  if (yield* gen.duplicate(owner, key)) return { id: owner, created: false };
  const id = randomUUID();
  yield* gen.link(yield* gen.insert(id, owner, key, cmd.confidence), owner);
  return { id, created: true };
}

function* yielding(cmd: Cmd): Generator<unknown, Out, unknown> {
  let owner = (yield plain.entity(cmd.entity)) as string | undefined;
  if (!owner) yield plain.insertEntity(owner = randomUUID(), cmd.entity);
  const key = cmd.fact.toLowerCase();
  if (yield plain.duplicate(owner, key)) return { id: owner, created: false };
  const id = randomUUID();
  yield plain.link((yield plain.insert(id, owner, key, cmd.confidence)) as number, owner);
  return { id, created: true };
}

/** The SQLite driver: every step's value goes straight back in, no tick. */
function drive<T>(rule: Generator<unknown, T, unknown>): T {
  let step = rule.next();
  while (!step.done) step = rule.next(step.value);
  return step.value;
}

let n = 0;
const entities = Array.from({ length: 200 }, (_, i) => `entity ${i}`);
const next = (): Cmd => ({ entity: entities[n % 200]!, fact: `fact number ${n++} about things`, confidence: 0.9 });
const txn = (run: (cmd: Cmd) => Out) => db.transaction(() => { for (let i = 0; i < BATCH; i++) run(next()); });
const cases = {
  direct: txn(direct),
  'generator, yield*': txn((cmd) => drive(delegating(cmd))),
  'generator, yield': txn((cmd) => drive(yielding(cmd))),
};

// Short rounds, the cases interleaved, many times over: on a shared machine the median round of
// each case is what compares (the table grows alike under every case).
const ROUNDS = Math.max(5, Math.round(seconds * 10));
const TXNS = 20;
const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const started = performance.now();
    for (let t = 0; t < TXNS; t++) run.immediate();
    times[name]!.push((performance.now() - started) / (TXNS * BATCH));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// The driver's own cost, without SQLite: the same rule shape over operations that do nothing.
const noop = { *op(v: number) { return v; } };
function* emptyRule(): Generator<unknown, number, unknown> {
  let sum = 0;
  for (let i = 0; i < 5; i++) sum += yield* noop.op(i);
  return sum;
}
const directEmpty = () => { let sum = 0; for (let i = 0; i < 5; i++) sum += i; return sum; };
const bench = new Bench({ time: 500, warmupTime: 100 });
bench.add('5 steps, direct', directEmpty).add('5 steps, generator yield*', () => drive(emptyRule()));
await bench.run();
const latency = (t: (typeof bench.tasks)[number]) => {
  const result = t.result as { latency?: { mean: number } } | undefined;
  if (!result?.latency) throw new Error(`${t.name} produced no result`);
  return result.latency.mean;
};

const base = median(times.direct!);
console.log(table(`remember, ${BATCH} per transaction, in-memory SQLite: median of ${ROUNDS} interleaved rounds`,
  ['way the rule runs', 'µs / command', 'vs direct'],
  Object.entries(times).map(([name, values]) => [name, fmt.us(median(values)), fmt.pct(median(values) / base)])));
console.log(table('the driver alone (no SQL)', ['case', 'ns / call'], bench.tasks.map((t) => [t.name, (latency(t) * 1e6).toFixed(0)])));
