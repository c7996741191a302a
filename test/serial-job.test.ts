// The loop behind the background jobs (src/core/jobs/serial-job.ts): runs never overlap, pokes
// coalesce, background failures are reported and can be retried, idle() waits for all of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { SerialJob } from '../src/core/jobs/serial-job.js';

/** A job whose runs wait for `release()`, recording how many ran and how many ran at once. */
function gated(fail: (run: number) => boolean = () => false) {
  const seen = { runs: 0, running: 0, mostAtOnce: 0, errors: [] as string[] };
  let open: (() => void)[] = [];
  const job = new SerialJob<number>({
    work: async () => {
      const run = ++seen.runs;
      seen.mostAtOnce = Math.max(seen.mostAtOnce, ++seen.running);
      await new Promise<void>((resolve) => open.push(resolve));
      seen.running--;
      if (fail(run)) throw new Error(`run ${run} failed`);
      return run;
    },
    onError: (error) => seen.errors.push(error.message),
  });
  const release = async () => {
    // Let queued runs start, then let every started run finish.
    await sleep(5);
    const waiting = open;
    open = [];
    for (const resolve of waiting) resolve();
    await sleep(5);
  };
  return { job, seen, release };
}

test('runs queue one behind the other, each with its own result', async () => {
  const { job, seen, release } = gated();
  const results = Promise.all([job.run(), job.run(), job.run()]);
  for (let i = 0; i < 3; i++) await release();
  assert.deepEqual(await results, [1, 2, 3]);
  assert.equal(seen.mostAtOnce, 1);
});

test('pokes during a run add one run after it, however many there are', async () => {
  const { job, seen, release } = gated();
  job.poke();
  await sleep(5);
  for (let i = 0; i < 10; i++) job.poke();
  const idle = job.idle();
  await release();
  await release();
  await idle;
  assert.equal(seen.runs, 2);
  assert.equal(seen.mostAtOnce, 1);
});

test('a failed background run is reported; a delayed poke from onError retries it and idle() waits for the retry', async () => {
  const seen: string[] = [];
  let runs = 0;
  const job: SerialJob<void> = new SerialJob<void>({
    work: async () => {
      if (++runs === 1) throw new Error('endpoint down');
    },
    onError: (error) => {
      seen.push(error.message);
      job.poke(20);
    },
  });
  // The job's timers are unref'd (they never hold the process open): keep this test's loop alive.
  const keepAlive = setInterval(() => {}, 1_000);
  job.poke();
  await job.idle();
  clearInterval(keepAlive);
  assert.deepEqual(seen, ['endpoint down']);
  assert.equal(runs, 2, 'the retry ran before idle() resolved');
});

test('retryAfter from onError is armed before the run poked during the failing one starts (poke(delay) adds nothing then)', async () => {
  let fail!: () => void;
  const failing = new Promise<void>((resolve) => { fail = resolve; });
  const retryWaitingAtStart: boolean[] = [];
  const job: SerialJob<void> = new SerialJob<void>({
    work: async () => {
      retryWaitingAtStart.push(job.delayedPokeWaiting);
      if (retryWaitingAtStart.length === 1) {
        await failing;
        throw new Error('endpoint down');
      }
    },
    onError: () => job.retryAfter(20),
  });
  const keepAlive = setInterval(() => {}, 1_000);
  job.poke();
  await sleep(5);
  job.poke(); // a write while the first run is in flight: queued behind it
  fail();
  await job.idle();
  clearInterval(keepAlive);
  // The queued run saw the retry waiting (a backfill skips it), and the retry ran after it.
  assert.deepEqual(retryWaitingAtStart, [false, true, false]);
});

test('a failed run() rejects to its caller, is not reported, and the next run still happens', async () => {
  const { job, seen, release } = gated((run) => run === 1);
  const first = job.run();
  const second = job.run();
  await release();
  await release();
  await assert.rejects(first, /run 1 failed/);
  assert.equal(await second, 2);
  assert.deepEqual(seen.errors, []);
});

test('stop() ends delayed pokes and the schedule, and waits for the run in progress', async () => {
  const { job, seen, release } = gated();
  job.every(10);
  await sleep(30);
  assert.equal(seen.runs, 1, 'the schedule re-arms only after a run ends');
  job.poke(10);
  let stopped = false;
  const stopping = job.stop().then(() => { stopped = true; });
  await sleep(5);
  assert.equal(stopped, false, 'stop waits for the run in progress');
  await release();
  await stopping;
  await sleep(40);
  assert.equal(seen.runs, 1, 'no run after stop');
  job.poke();
  await sleep(5);
  assert.equal(seen.runs, 1, 'pokes after stop are ignored');
});

test('callbacks that throw neither stop the schedule nor reject into the process', async () => {
  let runs = 0;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const job = new SerialJob<number>({
    work: async () => {
      if (++runs % 2 === 0) throw new Error('run failed');
      return runs;
    },
    onResult: () => { throw new Error('onResult broke'); },
    onError: () => { throw new Error('onError broke'); },
  });
  const keepAlive = setInterval(() => {}, 1_000);
  job.every(5);
  // Wait (by count, not by time) for runs well past the first throwing callbacks.
  while (runs < 4) await sleep(5);
  await job.stop();
  await sleep(5);
  clearInterval(keepAlive);
  process.off('unhandledRejection', onUnhandled);
  assert.ok(runs >= 4, 'the schedule re-armed after each throwing callback');
  assert.deepEqual(unhandled, []);
});

test('a caller that gives up before its run starts is answered at once and its run is skipped; a started run is not cut', async () => {
  const { job, seen, release } = gated();
  const first = job.run();
  await sleep(5);
  const giveUp = new AbortController();
  const waiting = job.run(giveUp.signal);
  const third = job.run();
  giveUp.abort(new Error('waited too long'));
  // Rejected while the first run still holds the job (no release yet).
  await assert.rejects(waiting, /waited too long/);
  assert.equal(seen.runs, 1);
  await release();
  await release();
  assert.deepEqual([await first, await third], [1, 2], 'the abandoned run never ran; the one behind it did');

  const late = new AbortController();
  const started = job.run(late.signal);
  await sleep(5);
  late.abort(new Error('too late'));
  await release();
  assert.equal(await started, 3, 'aborting after the start changes nothing');
});
