// The PostgreSQL test harness (issue 16's groundwork): a private primary and a streaming replica
// made with pg_basebackup -R start from Debian's binaries on loopback ports, the replica replays
// the primary's writes and refuses its own, and both stop without leaving their files behind.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { postgresUnavailable, startPrimary, startReplica, type PgCluster } from './support/postgres.js';

const unavailable = postgresUnavailable();
if (unavailable) test(`PostgreSQL harness skipped: ${unavailable}`, { skip: unavailable }, () => {});
else {
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

  test('the replica is a hot standby of the primary and replays its writes', async () => {
    assert.equal(await primary.sql('SELECT pg_is_in_recovery()'), 'f');
    assert.equal(await replica.sql('SELECT pg_is_in_recovery()'), 't');
    await primary.sql("CREATE TABLE probe (id int PRIMARY KEY, note text); INSERT INTO probe VALUES (1, 'written on the primary')");
    const deadline = Date.now() + 10_000;
    let seen = '';
    while (Date.now() < deadline && seen === '') {
      seen = await replica.sql('SELECT note FROM probe WHERE id = 1').catch(() => '');
      if (seen === '') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(seen, 'written on the primary');
    await assert.rejects(replica.sql("INSERT INTO probe VALUES (2, 'on the replica')"), /read-only transaction/);
  });

  test('a stopped cluster leaves nothing behind', async () => {
    const extra = await startPrimary();
    assert.equal(await extra.sql('SELECT 1'), '1');
    await extra.stop();
    await assert.rejects(extra.sql('SELECT 1'));
    assert.equal(existsSync(extra.dir), false);
  });
}
