// Session-level evidence in recall ranking:
// - on small hand-built inputs: a turn in a session with several matching turns gains more than
//   one in a session with a single match; a fact outside any episode is a session of one;
// - through the service: of two turns that match a question, the one whose session matches it
//   elsewhere too is lifted above the (slightly better) other; and repeating or reversing the questions changes no
//   top 10 and no score, with the session stage on.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine, SIGNAL_WEIGHTS } from '../src/workers/recall/engine.js';
import { sessionEvidence } from '../src/workers/recall/session-evidence.js';
import type { CandidateRow } from '../src/workers/port/candidates.js';
import { post, startTestService, type TestService } from './support/service.js';

const turn = (rowid: number, episode: string, seq: number): CandidateRow =>
  ({ rowid, memory_type: 'episodic', episode_id: episode, seq, confidence: 1, created_at: rowid });
const fact = (rowid: number): CandidateRow =>
  ({ rowid, memory_type: 'semantic', episode_id: null, seq: null, confidence: 1, created_at: rowid });
const rowsOf = (...rows: CandidateRow[]) => new Map(rows.map((r) => [r.rowid, r]));

describe('session evidence', () => {
  const rows = rowsOf(turn(1, 'A', 0), turn(2, 'A', 5), turn(3, 'A', 9), turn(4, 'B', 0), turn(5, 'B', 1), fact(6));
  const scores = new Map([[1, 0.5], [2, 0.4], [3, 0.3], [4, 0.9], [5, 0], [6, 0.6]]);

  test('a session is scored by its best turns together, relative to the best session', () => {
    const bonus = sessionEvidence(rows, scores, 0.2, 3);
    // A: 0.5 + 0.4 + 0.3 = 1.2; B: 0.9 + 0 = 0.9; the fact: 3 × 0.6 = 1.8 (the best).
    assert.equal(bonus.get(1), bonus.get(3), 'every turn of a session gains the same');
    assert.ok(Math.abs(bonus.get(4)! - 0.2 * 0.9 / 1.8) < 1e-12);
    assert.ok(Math.abs(bonus.get(5)! - 0.2 * 0.9 / 1.8) < 1e-12, 'a turn no signal matched is lifted by its session');
    assert.ok(Math.abs(bonus.get(6)! - 0.2 * 1.8 / 1.8) < 1e-12 && Math.abs(bonus.get(1)! - 0.2 * 1.2 / 1.8) < 1e-12,
      'a fact stands for a session of three turns as good as it (0.6 × 3 = 1.8, now the best)');
  });

  test('only the best few turns count, so a long session is not favoured for its length', () => {
    const turnsOnly = new Map([...scores].filter(([rowid]) => rowid !== 6));
    const three = sessionEvidence(rows, turnsOnly, 0.2, 3);
    assert.ok(three.get(1)! > three.get(4)!, 'three matching turns (1.2) beat one strong one (0.9)');
    const bonus = sessionEvidence(rows, turnsOnly, 0.2, 1);
    // With one turn each: B's 0.9 now beats A's 0.5.
    assert.equal(bonus.get(4), 0.2);
    assert.ok(Math.abs(bonus.get(1)! - 0.2 * 0.5 / 0.9) < 1e-12);
  });

  test('weight 0, or nothing scored, adds nothing', () => {
    assert.equal(sessionEvidence(rows, scores, 0).size, 0);
    assert.equal(sessionEvidence(rows, new Map([[1, 0], [4, 0]]), 0.2).size, 0);
  });
});

describe('sessions through the service', () => {
  let t: TestService;
  let db: Db;
  const contents = new Map<string, string>();

  before(async () => {
    t = await startTestService();
    const session = async (lines: string[]) => {
      const ep = (await post(t.base, '/v1/episodes/start', { participants: ['Ann', 'Bob'] })).body.episode_id;
      for (const line of lines) await post(t.base, `/v1/episodes/${ep}/message`, { role: 'user', content: line });
    };
    // Two turns match "pottery class"; the longer one (weaker for bm25) is in the session that talks about the class elsewhere too.
    await session(['Ann: I finally signed up for a weekly pottery class at the community centre near the old station.', 'Bob: Nice, which day?', 'Ann: Thursdays, the pottery class runs until May.',
      'Bob: Send me a photo of the first bowl.', 'Ann: The pottery teacher says the class kiln is booked.']);
    await session(['Bob: Did you see the game?', 'Ann: My neighbour mentioned a pottery class.', 'Bob: The weather was awful.',
      'Ann: We stayed in all weekend.', 'Bob: Same here.']);
    await session(['Ann: The garden needs work.', 'Bob: I can bring a shovel.', 'Ann: And some seeds for the class project.']);
    await t.service.backfill.idle();
    db = openDatabase(join(t.dir, 'memory.db'), { readonly: true });
    for (const row of db.prepare('SELECT id, content FROM memories').all() as { id: string; content: string }[]) contents.set(row.id, row.content);
  });
  after(async () => {
    db?.close();
    await t?.close();
  });

  const engine = (session: number) => {
    const ns = db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
    // The neighbour lift off: the session stage alone (the signed-up turn is two before another match).
    return new RecallEngine(new SqliteReadPort(db, ns, 'default', { minSimilarity: 0.2 }), { weights: { session, adjacent: 0 } });
  };
  const ranked = async (session: number, query: string) => (await engine(session)
    .recall({ query, entity: null, types: ['episodic'], limit: 10, queryVector: null })).map((h) => contents.get(h.row.id)!);

  test('of two matches, the one whose session matches elsewhere too is lifted above the other', async () => {
    const signedUp = 'Ann: I finally signed up for a weekly pottery class at the community centre near the old station.';
    const mentioned = 'Ann: My neighbour mentioned a pottery class.';
    const without = await ranked(0, 'pottery class');
    assert.ok(without.indexOf(mentioned) < without.indexOf(signedUp), 'the fixture: without sessions the shorter turn ranks first');
    const withSessions = await ranked(SIGNAL_WEIGHTS.session, 'pottery class');
    assert.ok(withSessions.indexOf(signedUp) < withSessions.indexOf(mentioned));
  });

  test('repeating the questions, and asking them in reverse order, changes no top 10 and no score', async () => {
    const questions = ['pottery class', 'which day is the class', 'kiln teacher', 'weather weekend', 'garden seeds shovel', 'photo of the bowl'];
    const ask = async (query: string) => (await post(t.base, '/v1/recall', { query, limit: 10, types: ['episodic'], explain: true })).body.memories
      .map((m: { id: string; score: number }) => `${m.id} ${m.score}`);
    const first = new Map<string, string[]>();
    for (const q of questions) first.set(q, await ask(q));
    const sessionShares = (await post(t.base, '/v1/recall', { query: 'pottery class', limit: 10, types: ['episodic'], explain: true })).body.memories
      .map((m: { explanation: { signals: { signal: string; contribution: number }[] } }) => m.explanation.signals.find((s) => s.signal === 'session')!.contribution);
    assert.ok(new Set(sessionShares).size > 1, 'the session stage tells turns apart: this test would prove nothing otherwise');
    for (const q of questions) assert.deepEqual(await ask(q), first.get(q), `repeated: ${q}`);
    for (const q of [...questions].reverse()) assert.deepEqual(await ask(q), first.get(q), `reversed: ${q}`);
  });
});
