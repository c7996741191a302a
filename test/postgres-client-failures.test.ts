// The `postgres` client's failures seen in a failover drill (issue 31), injected on a real
// server: the backend of a connection in use is ended between two statements, on a reserved
// connection and inside a transaction. Without the guard (shared/postgres-client-guard.ts) the
// client throws a TypeError from a setImmediate out of every caller's reach and the thread dies.
// Shown here, in a worker thread as the service runs its writer and pool: the thread survives,
// the statement fails as a connection failure, the spoiled client is replaced and the next query
// answers; an unrelated uncaught error still ends the thread. The writer's side of a standby
// (a server in recovery) is shown with the writer's own connection (writer/postgres/primary.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { isNullSocketWrite } from '../src/shared/postgres-client-guard.js';
import { isConnectionFailure } from '../src/shared/postgres-errors.js';
import { ServiceError } from '../src/shared/errors.js';
import { PrimaryConnection } from '../src/writer/postgres/primary.js';
import { postgresUnavailable, replicaCaughtUp, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { tcpProxy } from './support/tcp-proxy.js';

const unavailable = postgresUnavailable();

interface Outcome { failed: string; caught: number; generation: number; afterwards: number }

function runThread(url: string, scenario: string): Promise<{ outcome?: Outcome; error?: Error; exitCode: number }> {
  const worker = new Worker(new URL('./support/client-failure-thread.js', import.meta.url), { workerData: { url, scenario } });
  let outcome: Outcome | undefined;
  let error: Error | undefined;
  worker.on('message', (message: Outcome) => { outcome = message; });
  worker.on('error', (e) => { error = e; });
  return new Promise((resolve) => worker.on('exit', (exitCode) => resolve({ outcome, error, exitCode })));
}

describe('the postgres client failing under a thread', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
  });
  after(async () => {
    await replica?.stop();
    await primary?.stop();
  });

  test('a socket closed between two statements of a reserved connection: the thread survives, the statement fails, the client is replaced', async () => {
    const { outcome, error, exitCode } = await runThread(primary.url, 'reserved');
    assert.equal(error, undefined, `the thread died: ${error?.stack}`);
    assert.equal(exitCode, 0);
    assert.ok(outcome, 'the thread reported after the failure');
    assert.equal(outcome.caught, 1, 'the client threw its null-socket write once, and the guard caught it');
    assert.ok(isConnectionFailure({ code: outcome.failed }), `the statement failed as a connection failure (${outcome.failed}), instead of hanging`);
    assert.equal(outcome.generation, 2, 'the spoiled client was replaced');
    assert.equal(outcome.afterwards, 1, 'the replaced client answers');
  });

  test('a statement of over 1 KB on a reserved connection whose socket closed: the client\'s TypeError reaches the caller as a connection failure, the thread survives', async () => {
    const { outcome, error, exitCode } = await runThread(primary.url, 'large');
    assert.equal(error, undefined, `the thread died: ${error?.stack}`);
    assert.equal(exitCode, 0);
    assert.ok(outcome);
    assert.ok(isConnectionFailure({ code: outcome.failed }), `the statement failed as a connection failure (${outcome.failed}), not as a TypeError`);
    assert.equal(outcome.generation, 2, 'the spoiled client was replaced');
    assert.equal(outcome.afterwards, 1, 'the replaced client answers');
  });

  test('a transaction whose server session ends between two statements: the thread survives, the transaction fails, the client is replaced', async () => {
    const { outcome, error, exitCode } = await runThread(primary.url, 'transaction');
    assert.equal(error, undefined, `the thread died: ${error?.stack}`);
    assert.equal(exitCode, 0);
    assert.ok(outcome);
    assert.ok(isConnectionFailure({ code: outcome.failed }), `the transaction failed as a connection failure (${outcome.failed})`);
    assert.equal(outcome.caught, 1, 'the ROLLBACK the client sends on the closed connection was caught');
    assert.equal(outcome.generation, 2);
    assert.equal(outcome.afterwards, 1);
  });

  test('in a Piscina thread, as the read pool runs reads: every failure is a failed statement, the same thread serves the next task', async () => {
    const pool = new Piscina({ filename: new URL('./support/client-failure-task.js', import.meta.url).href, minThreads: 1, maxThreads: 1, atomics: 'disabled' });
    const poolErrors: unknown[] = [];
    pool.on('error', (e) => poolErrors.push(e));
    try {
      const outcomes: { failed: string; caught: number; afterwards: number; threadId: number }[] = [];
      for (const scenario of ['reserved', 'large', 'transaction', 'reserved']) outcomes.push(await pool.run({ url: primary.url, scenario }));
      for (const o of outcomes) assert.ok(isConnectionFailure({ code: o.failed }), `failed as a connection failure: ${JSON.stringify(o)}`);
      assert.deepEqual(outcomes.map((o) => o.afterwards), [1, 1, 1, 1], 'the replaced client answered after each');
      assert.equal(new Set(outcomes.map((o) => o.threadId)).size, 1, `one thread served every task: ${JSON.stringify(outcomes)}`);
      assert.ok(outcomes.at(-1)!.caught >= 3, `the guard caught the client's TypeError in the pool thread: ${JSON.stringify(outcomes)}`);
      assert.deepEqual(poolErrors, []);
      await pool.run({ url: primary.url, scenario: 'close' });
    } finally {
      await pool.destroy();
    }
  });

  test('an unrelated uncaught error still ends the thread: the guard swallows nothing else', async () => {
    const { error, exitCode } = await runThread(primary.url, 'unrelated');
    assert.ok(error instanceof TypeError && error.message === 'unrelated failure', `the thread's own error reached its parent: ${error}`);
    assert.equal(exitCode, 1);
    assert.equal(isNullSocketWrite(error), false);
  });

  test('the writer\'s connection to a URL that leads only to a standby: bounded wait, then DATABASE_UNAVAILABLE; with the primary listed after it, the primary', async () => {
    await replicaCaughtUp(primary, replica);
    const states: boolean[] = [];
    const onlyStandby = new PrimaryConnection(replica.url, 300, () => {}, (available) => states.push(available));
    try {
      const error = await onlyStandby.ready().then(() => null, (e: unknown) => e);
      assert.ok(error instanceof ServiceError && error.code === 'DATABASE_UNAVAILABLE' && error.status === 503, `answered ${error}`);
      assert.equal(error.retryAfterSeconds !== undefined, true, 'with Retry-After');
      assert.deepEqual(states, [false], 'the main thread is told the primary is missing');
    } finally {
      await onlyStandby.close();
    }
    // The standby listed first, without target_session_attrs: the client lands on it; the check
    // passes over it to the primary.
    const both = `postgres://memrt@127.0.0.1:${replica.port},127.0.0.1:${primary.port}/postgres`;
    const writer = new PrimaryConnection(both, 5_000, () => {});
    try {
      await writer.ready();
      const [{ port, standby }] = await writer.sql<{ port: string; standby: boolean }[]>`SELECT current_setting('port') AS port, pg_is_in_recovery() AS standby`;
      assert.equal(Number(port), primary.port, 'the writer is on the primary');
      assert.equal(standby, false);
    } finally {
      await writer.close();
    }
  });

  // The drill's rare stall after a promotion (a node acknowledging nothing for 10 s): on a loaded
  // box a new connection takes longer than a write past its wait gave the look for the primary,
  // and each look that ran out replaced the client, so with writes retrying back to back no
  // connection ever got far enough to be checked.
  test('a primary slow to take a new connection is found while writes keep asking past their wait', async () => {
    const proxy = await tcpProxy(primary.port);
    // No primary to be had at first (no connection gets through within a look): the writer
    // looks for one in the background while writes are refused, as in a failover.
    proxy.connectDelayMs = 60_000;
    // No wait at all: every write is past it, as writes are once a failover has lasted the wait.
    const writer = new PrimaryConnection(`postgres://memrt@127.0.0.1:${proxy.port}/postgres`, 0, () => {});
    const write = () => writer.ready().then(() => true, (error: unknown) => {
      assert.ok(error instanceof ServiceError && error.code === 'DATABASE_UNAVAILABLE', `answered ${error}`);
      return false;
    });
    try {
      for (let i = 0; i < 15; i++) assert.equal(await write(), false, 'no primary yet');
      // The primary is there, slow to take a connection (a loaded box forking a backend).
      proxy.connectDelayMs = 300;
      for (let refused = 0; !(await write()); refused++) {
        // A liveness bound, not a speed check: without the fix no write is ever let through.
        assert.ok(refused < 100, 'the primary was never found while writes kept coming');
      }
      const [{ standby }] = await writer.sql<{ standby: boolean }[]>`SELECT pg_is_in_recovery() AS standby`;
      assert.equal(standby, false);
    } finally {
      await writer.close();
      await proxy.close();
    }
  });
});
