// Consolidation's parts on their own: clustering, the writer's re-checks, the run scheduler.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { clusterRepeats, representative, type Statement } from '../src/workers/consolidation/cluster.js';
import { promotedConfidence } from '../src/workers/consolidation/promotion.js';
import { applyPlan } from '../src/writer/commands/consolidate.js';
import { runNow } from '../src/writer/commands/run.js';
import { sqliteRuleContext } from '../src/writer/sqlite/adapter.js';
import type { ConsolidationPlan } from '../src/shared/protocol/writer.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { Consolidator } from '../src/core/jobs/consolidator.js';
import { createLogger } from '../src/shared/logger.js';
import { contentKey } from '../src/shared/text.js';

/** A statement whose vector is a unit vector at `angle` degrees in a plane. */
function at(rowid: number, content: string, angle: number | null): Statement {
  const rad = ((angle ?? 0) * Math.PI) / 180;
  return { rowid, content, key: contentKey(content), vector: angle === null ? null : Float32Array.from([Math.cos(rad), Math.sin(rad)]) };
}

/** The consolidate rule's plan application over SQLite, with the promotion store given. */
class ConsolidationWriter {
  private readonly ctx;
  constructor(db: Database.Database, ns: number) {
    this.ctx = sqliteRuleContext(db, ns, { episodeTtlMs: 0 });
  }
  apply(plan: ConsolidationPlan, put: (p: ConsolidationPlan['promote'][number]) => { rowid: number; created: boolean }) {
    return runNow(applyPlan(this.ctx, plan, function* (p) { return put(p); }));
  }
}

describe('clustering', () => {
  test('groups statements within the threshold of their leader, drops singletons', () => {
    // cos 10° ≈ 0.985, cos 30° ≈ 0.866
    const clusters = clusterRepeats([at(1, 'a one', 0), at(2, 'a two', 10), at(3, 'b', 90), at(4, 'a three', 30)], 0.95);
    assert.deepEqual(clusters.map((c) => c.map((s) => s.rowid)), [[1, 2]]);
  });

  test('does not chain: similarity is to the leader, not to the last member', () => {
    const clusters = clusterRepeats([at(1, 'x', 0), at(2, 'y', 15), at(3, 'z', 30)], 0.96);
    assert.deepEqual(clusters.map((c) => c.map((s) => s.rowid)), [[1, 2]]);
  });

  test('equal normalised text is a repeat even without vectors', () => {
    const clusters = clusterRepeats([at(1, 'I surf.', null), at(2, 'i surf', null), at(3, 'I ski', null)], 0.9);
    assert.deepEqual(clusters.map((c) => c.map((s) => s.rowid)), [[1, 2]]);
  });

  test('different numbers or negation never cluster, however close the vectors', () => {
    assert.deepEqual(clusterRepeats([at(1, 'I have 2 cats', 0), at(2, 'I have 3 cats', 0)], 0.9), []);
    assert.deepEqual(clusterRepeats([at(1, 'I like olives', 0), at(2, "I don't like olives", 0)], 0.9), []);
    assert.equal(clusterRepeats([at(1, 'I have 2 cats', 0), at(2, 'I have 2 cats now', 1)], 0.9).length, 1);
  });

  test('the representative is the medoid', () => {
    const cluster = [at(1, 'edge', -20), at(2, 'middle', 0), at(3, 'other edge', 20)];
    assert.equal(representative(cluster).rowid, 2);
  });

  test('promoted confidence grows with repeats, capped', () => {
    assert.deepEqual([2, 3, 5, 50].map(promotedConfidence), [0.6, 0.7, 0.9, 0.9]);
  });
});

describe('consolidation writer', () => {
  function store() {
    const db = new Database(':memory:');
    migrate(db);
    const ns = ensureNamespace(db, 'default');
    const insert = db.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
      stability, difficulty, last_access_at, created_at, extraction_tier) VALUES (?, ?, ?, ?, ?, 1, 2, 5, 1000, 1000, 1)`);
    for (let i = 1; i <= 4; i++) insert.run(`m${i}`, ns, i <= 3 ? 'episodic' : 'semantic', `text ${i}`, `text ${i}`);
    return db;
  }
  const decayItem = (rowid: number, lastAccessAt: number, archive = false) =>
    ({ rowid, lastAccessAt, stability: 1, difficulty: 6.7, decayed: true, archive });

  test('applies items whose row is unchanged since planning, and counts exactly', () => {
    const db = store();
    const writer = new ConsolidationWriter(db, 1);
    const result = writer.apply({ at: 5000, watermark: 7, promote: [], decay: [decayItem(1, 1000), decayItem(2, 999), decayItem(3, 1000, true)] }, () => {
      throw new Error('no promotion expected');
    });
    assert.deepEqual(result, { promoted: 0, decayed: 1, archived: 1 }, 'row 2 was accessed since planning: left alone');
    const rows = db.prepare('SELECT rowid, stability, archived, decayed_at FROM memories ORDER BY rowid').all() as any[];
    assert.deepEqual(rows.slice(0, 3).map((r) => [r.stability, r.archived, r.decayed_at]), [[1, 0, 5000], [2, 0, null], [1, 1, 5000]]);
    const watermark = db.prepare("SELECT value FROM meta WHERE key = 'promotion_watermark:1'").get() as { value: string };
    assert.equal(watermark.value, '7', 'the next run clusters only entities with newer episodic memories');
  });

  test('promotes only when every member is still an active, unpromoted episodic memory', () => {
    const db = store();
    const writer = new ConsolidationWriter(db, 1);
    const stored: string[] = [];
    const put = (p: { content: string }) => {
      stored.push(p.content);
      return { rowid: 4, created: true };
    };
    const promotion = (members: number[]) => ({ ownerId: 'e', content: `from ${members}`, confidence: 0.6, episodeId: null, members });
    assert.deepEqual(writer.apply({ at: 1, watermark: 0, promote: [promotion([1, 2])], decay: [] }, put), { promoted: 1, decayed: 0, archived: 0 });
    // 2 is now promoted; 4 is not episodic: neither cluster may promote again.
    assert.deepEqual(writer.apply({ at: 1, watermark: 0, promote: [promotion([2, 3]), promotion([3, 4])], decay: [] }, put), { promoted: 0, decayed: 0, archived: 0 });
    assert.deepEqual(stored, ['from 1,2']);
    assert.deepEqual(db.prepare('SELECT promoted_into FROM memories ORDER BY rowid').all().map((r: any) => r.promoted_into), [4, 4, null, null]);
  });
});

describe('consolidator', () => {
  test('runs never overlap, whoever asks', async () => {
    let active = 0;
    let most = 0;
    const pool = {
      run: async () => {
        active++;
        most = Math.max(most, active);
        await sleep(20);
        active--;
        return { at: 0, watermark: 0, promote: [], decay: [] };
      },
    };
    let n = 0;
    const writer = { send: async () => ({ promoted: ++n, decayed: 0, archived: 0 }) };
    const backfill = { poke: () => {} };
    const consolidator = new Consolidator(pool as any, writer as any, backfill as any, createLogger('silent'), 5);
    consolidator.start(); // the schedule joins the same queue
    const results = await Promise.all([consolidator.run('default'), consolidator.run('default'), consolidator.run('default')]);
    await consolidator.stop();
    assert.equal(most, 1);
    assert.deepEqual(results.map((r) => r.promoted), [...results.map((r) => r.promoted)].sort((a, b) => a - b), 'in order');
    assert.ok(consolidator.runs >= 3);
  });

  test('a failed run does not stop the next one', async () => {
    let calls = 0;
    const pool = { run: async () => (++calls === 1 ? Promise.reject(new Error('boom')) : { at: 0, watermark: 0, promote: [], decay: [] }) };
    const writer = { send: async () => ({ promoted: 0, decayed: 0, archived: 0 }) };
    const consolidator = new Consolidator(pool as any, writer as any, { poke() {} } as any, createLogger('silent'), 0);
    await assert.rejects(consolidator.run('default'), /boom/);
    assert.deepEqual(await consolidator.run('default'), { promoted: 0, decayed: 0, archived: 0 });
    await consolidator.stop();
  });
});
