// New memories get their vectors while recalls keep the CPU busy. The embedding backfill runs in
// the background lane at SCHED_IDLE, which gets no CPU a normal thread wants: under sustained
// recall load it stalled and the backlog only drained once the load stopped
// (core/jobs/embedding-backfill.ts: the floor). The service is pinned to one core with one recall
// thread and 16 recalls always in flight, so that core is never idle, on any machine: that many so
// the service still has recalls queued while the test process itself waits for a core on a loaded
// box (with 8, a full run under `node --test`, every file in one session, at load ~20 once saw the
// background lane drain the backlog in the gaps, the floor never needed). Progress
// is asserted (the backlog reaches zero while the recalls go on, the floor's counter moved),
// never a speed: the test's timeout is the only clock (600 s: ~40 s alone on a quiet box, but the
// service is pinned to one core, whose share it splits with every other busy process there — 240 s
// ran out in a full run beside other work at load 40). A second write after the first backlog
// drained is embedded too: the starved round may still be open then, and the floor goes on
// until it settles (without that, the second backlog waited ~60 s for the idle thread).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exited, spawnService } from './support/process.js';
import { parseSamples, sample } from './support/prometheus.js';
import { get, post, tempDir } from './support/service.js';
import { backendEnv } from './support/test-backend.js';

const tasksetMissing = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status !== 0;
const IN_FLIGHT = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('under recalls that keep every core of the service busy, the embedding backlog still drains', { skip: tasksetMissing ? 'needs taskset (util-linux)' : false, timeout: 600_000 }, async () => {
  // The default embedder (USE-lite): a batch is real CPU work, as in production.
  const node = await spawnService({
    ...(await backendEnv()),
    SERVICE_PATH: join(tempDir('memrt-backfill-'), 'memory.db'),
    SERVICE_POOL_THREADS: '1',
    SERVICE_BACKGROUND_THREADS: '1',
    SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0',
  }, ['taskset', '-c', '0']);
  const metric = async (name: string) => sample(parseSamples((await get(node.base, '/metrics')).body), name);
  const backlog = () => metric('memory_runtime_embedding_backlog');
  const byFloor = () => metric('memory_runtime_embedding_floor_vectors_total');
  let recalls = 0;
  let stop = false;
  const load = Promise.all(Array.from({ length: IN_FLIGHT }, async (_, worker) => {
    for (let i = worker; !stop; i += IN_FLIGHT) {
      // Each query new: no cached query vector, so every recall embeds its query (real CPU).
      const r = await post(node.base, '/v1/recall', { query: `what does member ${i % 40} keep in shed ${i.toString(36)} of the garden`, limit: 5 });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      recalls++;
    }
  }));
  // A failed recall ends its worker; the test reports it after the others stopped.
  const loadOutcome = load.then(() => null, (error: unknown) => error);
  try {
    while (recalls < 16) await sleep(50);
    assert.equal(await Promise.race([loadOutcome, sleep(0)]), undefined, 'the recalls run');
    // Remembers arrive while the recalls run.
    for (let b = 0; b < 4; b++) {
      const facts = Array.from({ length: 24 }, (_, i) => ({ entity: `member-${(b * 24 + i) % 40}`, fact: `Member ${b * 24 + i} keeps a ${['rake', 'ladder', 'kayak', 'bicycle'][i % 4]} and ${i} flower pots in the garden shed` }));
      const r = await post(node.base, '/v1/remember/batch', { facts });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const recallsWhenWritten = recalls;
    assert.ok(await backlog() > 0, 'the facts wait for their vectors');
    while (await backlog() > 0) await sleep(250);
    assert.ok(recalls > recallsWhenWritten, 'the recalls went on while the backlog drained');
    // Each batch of the idle-priority background lane waits for a core the recalls never leave.
    assert.ok(await byFloor() > 0, 'the floor embedded some of them');

    // More remembers, the recalls still running.
    const facts = Array.from({ length: 24 }, (_, i) => ({ entity: `member-${i % 40}`, fact: `Member ${i} later bought a ${['saw', 'hose', 'tent', 'canoe'][i % 4]} and ${i} seed trays` }));
    assert.equal((await post(node.base, '/v1/remember/batch', { facts })).status, 200);
    const recallsWhenWrittenAgain = recalls;
    while (await backlog() > 0) await sleep(250);
    assert.ok(recalls > recallsWhenWrittenAgain, 'the recalls went on while the second backlog drained');
    stop = true;
    assert.equal(await loadOutcome, null, 'every recall answered 200');
  } finally {
    stop = true;
    await loadOutcome;
    node.child.kill('SIGKILL');
    await exited(node.child);
  }
});
