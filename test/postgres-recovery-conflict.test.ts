// A recall snapshot that a hot standby cancels on a recovery conflict is not the recall's failure:
// a real primary and a real `pg_basebackup -R` replica that cancels conflicting queries at once
// (max_standby_streaming_delay = 0, hot_standby_feedback off). A snapshot on the replica reads rows
// and then sits in pg_sleep; the primary deletes the rows and vacuums them away; replaying that
// cleanup cancels the replica's statement (SQLSTATE 40001), and the snapshot is run again on the
// primary, whose answer — no rows — is returned. Any other error of the statement is still thrown.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectReader, type Sql, type Tx } from '../src/workers/postgres/client.js';
import { ReadSource } from '../src/workers/postgres/replica.js';
import type { ReadSide, ServedNote } from '../src/shared/protocol/pool.js';
import { postgresUnavailable, replicaCaughtUp, startPrimary, startReplica, type PgCluster } from './support/postgres.js';

const unavailable = postgresUnavailable();

/** Long enough that only a cancel ends it before the test's own timeout; the test never waits it out when it passes. */
const SLEEP_SECONDS = 60;

describe('recall on a replica that cancels the snapshot on a recovery conflict', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let primarySql: Sql;
  let replicaSql: Sql;

  /** Resolves once a pool session on the replica is inside pg_sleep (so a conflict cancels a running statement). */
  async function sleepingOnReplica(): Promise<void> {
    const sleeping = `SELECT count(*) FROM pg_stat_activity
      WHERE application_name = 'memory-runtime pool' AND state = 'active' AND wait_event = 'PgSleep'`;
    while (await replica.sql(sleeping) !== '1') await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** A recall-like read: counts the rows, and on the standby then stays in its snapshot until cancelled. */
  async function countThenSleep(tx: Tx): Promise<{ rows: number; standby: boolean }> {
    const [{ rows, standby }] = await tx<{ rows: number; standby: boolean }[]>`SELECT count(*) AS rows, pg_is_in_recovery() AS standby FROM notes`;
    if (standby) await tx`SELECT pg_sleep(${SLEEP_SECONDS})`;
    return { rows, standby };
  }

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
    // Replay cancels a conflicting query at once, and the primary is not told what the
    // replica's snapshots still need (with feedback on, VACUUM would keep the rows).
    await replica.sql('ALTER SYSTEM SET max_standby_streaming_delay = 0');
    await replica.sql('ALTER SYSTEM SET hot_standby_feedback = off');
    await replica.sql('SELECT pg_reload_conf()');
    assert.equal(await replica.sql('SHOW max_standby_streaming_delay'), '0', 'the fixture: conflicts cancel at once');
    assert.equal(await replica.sql('SHOW hot_standby_feedback'), 'off', 'the fixture: no feedback to the primary');
    primarySql = connectReader(primary.url);
    replicaSql = connectReader(`${replica.url}?target_session_attrs=prefer-standby`);
  });
  after(async () => {
    await replicaSql?.end();
    await primarySql?.end();
    await replica?.stop();
    await primary?.stop();
  });

  test('the replica cancels the snapshot; the primary answers it; the replica stays in use', async () => {
    await primary.sql('CREATE TABLE notes (id int PRIMARY KEY, body text)');
    await primary.sql("INSERT INTO notes SELECT n, 'note ' || n FROM generate_series(1, 50) n");
    await replicaCaughtUp(primary, replica);
    const source = new ReadSource(primarySql, { sql: replicaSql, maxLagMs: 1000 });
    const reports: [ReadSide, ServedNote | undefined][] = [];

    const answer = source.snapshot(undefined, countThenSleep, (side, note) => reports.push([side, note]));
    await sleepingOnReplica();
    // Cleanup the replica's snapshot still needs: replaying it conflicts with the sleeping statement.
    await primary.sql('DELETE FROM notes');
    await primary.sql('VACUUM notes');

    assert.deepEqual(await answer, { rows: 0, standby: false }, "the primary's answer, after the delete");
    assert.equal(source.recoveryConflicts, 1, 'the replica cancelled the snapshot');
    assert.deepEqual(source.served, { replica: 0, primary: 1 });
    assert.deepEqual(reports, [['primary', { recoveryConflict: true }]]);

    // Not a replica failure: the next snapshot reads the replica again (no REPLICA_RETRY_MS pause).
    await replicaCaughtUp(primary, replica);
    const next = await source.snapshot(undefined, async (tx) => (await tx<{ standby: boolean }[]>`SELECT pg_is_in_recovery() AS standby`)[0]);
    assert.deepEqual(next, { standby: true });
    assert.deepEqual(source.served, { replica: 1, primary: 1 });
  });

  test('any other error of the statement on the replica is thrown, not run again on the primary', async () => {
    const source = new ReadSource(primarySql, { sql: replicaSql, maxLagMs: 1000 });
    const reports: ReadSide[] = [];
    await assert.rejects(
      source.snapshot(undefined, (tx) => tx.unsafe('SELEC 1'), (side) => reports.push(side)),
      (error: { code?: string }) => error.code === '42601',
      'the syntax error, as the replica reported it',
    );
    assert.equal(source.recoveryConflicts, 0);
    assert.deepEqual(source.served, { replica: 0, primary: 0 }, 'the primary was not asked');
    assert.deepEqual(reports, []);
  });
});
