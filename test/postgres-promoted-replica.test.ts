// After a failover the read URL may lead to a standby that has been promoted: a primary now, whose
// pg_last_wal_replay_lsn() stays frozen at the promotion until it restarts. A positioned recall
// there must not wait SERVICE_READ_MAX_LAG_MS for a replay that never comes: the promoted server
// holds every write made since (it takes them itself), so it serves the recall at once.
// Real parts: a private primary, a `pg_basebackup -R` replica promoted with pg_promote(), and a
// position the frozen replay LSN is behind (written on the old primary after the promotion, so
// the old primary, asked once, says the position is not past its own flush).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectReader, type Sql } from '../src/workers/postgres/client.js';
import { ReadSource } from '../src/workers/postgres/replica.js';
import { postgresUnavailable, replicaCaughtUp, startPrimary, startReplica, type PgCluster } from './support/postgres.js';

const unavailable = postgresUnavailable();

/** Far longer than the test could take when it passes: a wait for replay shows as this much time and a primary read. */
const MAX_LAG_MS = 30_000;

describe('a replica URL leading to a promoted standby', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let primarySql: Sql;
  let replicaSql: Sql;

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
    primarySql = connectReader(primary.url);
    replicaSql = connectReader(replica.url);
  });
  after(async () => {
    await replicaSql?.end();
    await primarySql?.end();
    await replica?.stop();
    await primary?.stop();
  });

  test('serves a positioned snapshot at once, although its replay position is frozen behind it', async () => {
    await primary.sql('CREATE TABLE notes (id int PRIMARY KEY)');
    await replicaCaughtUp(primary, replica);
    await replica.sql('SELECT pg_promote(true, 60)');
    assert.equal(await replica.sql('SELECT pg_is_in_recovery()'), 'f', 'the fixture: the replica is a primary now');
    const frozen = await replica.sql('SELECT pg_last_wal_replay_lsn()');
    assert.notEqual(frozen, '', 'the fixture: a promoted standby still reports its last replayed position');

    await primary.sql('INSERT INTO notes SELECT generate_series(1, 10)');
    const position = await primary.sql('SELECT pg_current_wal_flush_lsn()');
    assert.equal(await replica.sql(`SELECT '${frozen}'::pg_lsn < '${position}'::pg_lsn`), 't', 'the fixture: the frozen position is behind');

    const source = new ReadSource(primarySql, { sql: replicaSql, maxLagMs: MAX_LAG_MS });
    const port = await source.snapshot(position, async (tx) => (await tx<{ port: string }[]>`SELECT current_setting('port') AS port`)[0]!.port);
    assert.deepEqual(source.served, { replica: 1, primary: 0 }, 'read through the replica URL, not after waiting out the lag bound');
    assert.equal(Number(port), replica.port, 'the promoted server answered');
  });
});
