// The scheduling rule: interactive work (recall, recall_grouped, inspect, stats) never waits
// behind background work (embedding backfill, vector-index upkeep, consolidation, extraction).
// Real Piscina lanes and real worker threads; ordering is asserted, never timing.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { LanePool } from '../src/core/pool/lane-pool.js';
import { POOL_TASKS } from '../src/shared/protocol/pool.js';
import type { PriorityChange } from '../src/shared/os-thread.js';
import { startTestService } from './support/service.js';
import type { GateTask } from './support/gate-worker.js';

const BACKGROUND = 100;
const INTERACTIVE = 1;
const REQUESTED = 2;

function started(log: Int32Array): number[] {
  return Array.from(log.subarray(1, 1 + Atomics.load(log, 0)));
}

/** Resolves once `count` tasks have started (Atomics.waitAsync: no polling, no timers). */
async function untilStarted(log: Int32Array, count: number): Promise<void> {
  for (;;) {
    const seen = Atomics.load(log, 0);
    if (seen >= count) return;
    // Node 20 has Atomics.waitAsync; the compile target's lib does not declare it yet.
    await (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { value: Promise<unknown> | string } }).waitAsync(log, 0, seen).value;
  }
}

test('with the background lane saturated, an interactive task starts before the queued background tasks, and they all still complete', async () => {
  const pool = new LanePool({
    filename: new URL('./support/gate-worker.js', import.meta.url).href,
    workerData: {},
    lanes: {
      interactive: { threads: 1, concurrentTasksPerWorker: 1 },
      requested: { threads: 1, concurrentTasksPerWorker: 1 },
      background: { threads: 1, concurrentTasksPerWorker: 1 },
    },
    onError: (error) => assert.fail(String(error)),
  });
  const log = new Int32Array(new SharedArrayBuffer(4 * 16));
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const open = () => {
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
  };
  try {
    const task = (kind: GateTask['kind'], id: number): GateTask => ({ kind, id, log, gate });
    // One background task holds the only background thread; three more queue behind it.
    const background = [0, 1, 2, 3].map((i) => pool.run('background', task('hold', BACKGROUND + i)));
    await untilStarted(log, 1);
    assert.equal(pool.queueSize('background'), 3);

    const interactive = await pool.run('interactive', task('mark', INTERACTIVE));
    assert.equal(interactive, INTERACTIVE);
    assert.deepEqual(started(log), [BACKGROUND, INTERACTIVE], 'the interactive task ran while background work was still queued');
    // Work a client waits for that is not a quick read (a delete's snapshot, an episode end) neither.
    assert.equal(await pool.run('requested', task('mark', REQUESTED)), REQUESTED);
    assert.deepEqual(started(log), [BACKGROUND, INTERACTIVE, REQUESTED], 'the requested task ran while background work was still queued');
    assert.equal(pool.queueSize('background'), 3);

    open();
    assert.deepEqual(await Promise.all(background), [100, 101, 102, 103]);
    // The rest ran after; among themselves background tasks keep no promised order.
    assert.deepEqual(started(log).slice(3).sort(), [101, 102, 103]);
  } finally {
    open();
    await pool.close();
  }
});

test('every client-facing read is interactive, other work a client waits for requested, and every upkeep task background', () => {
  const lane = (name: string) => Object.entries(POOL_TASKS).filter(([, t]) => t.lane === name).map(([op]) => op).sort();
  assert.deepEqual(lane('interactive'), ['embedQueries', 'embeddingBacklog', 'inspect', 'listEntities', 'listEpisodes', 'listNamespaces', 'memoryHistory', 'recall', 'recallGrouped', 'stats', 'warmUp']);
  // Snapshot files (and PostgreSQL's snapshot rows) are checked and read a chunk at a time (hundreds of MB for a big entity): never in recall's way.
  assert.deepEqual(lane('requested'), ['checkSnapshot', 'extractImport', 'listSnapshots', 'planConsolidation', 'prepareEpisodeEnd', 'readSnapshotMemories', 'readStoredSnapshotMemories', 'snapshotEntity', 'snapshotMemory']);
  // The background jobs' look-ups of which namespaces have work (issue 25) are upkeep too, and so
  // is building the shared vector codes (issue 27: never inside a recall).
  assert.deepEqual(lane('background'), ['embedPending', 'namespaceNames', 'pendingNamespaces', 'refreshVectorCodes', 'staleVectorMoves', 'trainVectorIndex', 'vectorIndexStatus']);
});

/** Name, nice and scheduling policy of each thread of this process, from /proc (Linux). */
function threadPriorities(): { name: string; nice: number; policy: number }[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]), policy: Number(fields[38]) }];
    } catch {
      return [];
    }
  });
}

test('the service runs its background lane at the lowest OS priority, its writer below its interactive lane, and that lane at the normal one', { skip: process.platform !== 'linux' }, async () => {
  const before = threadPriorities().filter((t) => t.nice === 19).length;
  const t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_BACKGROUND_THREADS: '1' });
  try {
    // Threads start lazily with their first task: stats (interactive) and the start-up backfill (background).
    assert.equal((await fetch(`${t.base}/v1/stats`)).status, 200);
    await t.service.backfill.idle();
    const lowered = threadPriorities().filter((p) => p.nice === 19);
    assert.equal(lowered.length - before, 1, 'one background thread, reniced');
    // SCHED_IDLE (5) where util-linux's chrt exists; nice 19 alone (SCHED_OTHER, 0) otherwise.
    const chrtInstalled = spawnSync('chrt', ['--version'], { stdio: 'ignore' }).status === 0;
    const expected = chrtInstalled ? 5 : 0;
    assert.ok(lowered.every((p) => p.policy === expected), JSON.stringify(lowered));
    // Threads are named by role: recall's lane keeps the normal priority, the writer yields
    // to it (10 nice levels below the process) but keeps the normal policy, so its commits
    // still get CPU. Relative to the runner's own nice value: a niced `npm test` starts every
    // thread there, and the writer stays below it.
    const base = getPriority();
    const named = threadPriorities();
    const interactive = named.filter((p) => p.name === 'mr-interactive');
    assert.ok(interactive.length > 0 && interactive.every((p) => p.nice === base && p.policy === 0));
    assert.ok(named.some((p) => p.name === 'mr-background' && p.nice === 19));
    assert.ok(named.some((p) => p.name === 'mr-writer' && p.nice === Math.min(19, base + 10) && p.policy === 0));
  } finally {
    await t.close();
  }
});

/** Runs lowerThreadPriorityBy(step) in a fresh thread (never this one) and returns what it said and the thread's nice after. */
async function lowerInThread(step: number): Promise<{ change: PriorityChange; nice: number }> {
  const module = new URL('../src/shared/os-thread.js', import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(module)}).then((m) => { const change = m.lowerThreadPriorityBy(${step}); require('node:worker_threads').parentPort.postMessage({ change, nice: require('node:os').getPriority(0) }); });`,
    { eval: true },
  );
  const [reply] = (await once(worker, 'message')) as [{ change: PriorityChange; nice: number }];
  await worker.terminate();
  return reply;
}

test('a thread lowers itself relative to the process priority, capped at the lowest nice value', { skip: process.platform !== 'linux' }, async () => {
  const base = getPriority();
  const three = await lowerInThread(3);
  assert.deepEqual(three.change, { lowered: true, from: base, to: Math.min(19, base + 3) });
  assert.equal(three.nice, Math.min(19, base + 3));
  // A step past the bottom stops at 19 instead of failing.
  const far = await lowerInThread(40);
  assert.deepEqual(far.change, { lowered: true, from: base, to: 19 });
  assert.equal(far.nice, 19);
  assert.equal(getPriority(), base, 'the calling thread is the one lowered, not the process');
});

test('a thread already at the lowest priority reports that it could not be lowered', { skip: process.platform !== 'linux' }, async () => {
  const module = new URL('../src/shared/os-thread.js', import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(module)}).then((m) => { m.lowerThreadPriorityBy(40); require('node:worker_threads').parentPort.postMessage(m.lowerThreadPriorityBy(10)); });`,
    { eval: true },
  );
  const [change] = (await once(worker, 'message')) as [PriorityChange];
  await worker.terminate();
  assert.equal(change.lowered, false);
});
