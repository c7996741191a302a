// The privileges README's "Running on PostgreSQL" asks for, and no more: a service node whose
// SERVICE_DATABASE_URL role owns its database but is no superuser (it creates the schema and the
// `unaccent` extension, takes advisory locks, reads WAL positions), and whose
// SERVICE_READ_DATABASE_URL role may only SELECT (granted by default privileges before the schema
// exists), on a private primary and a `pg_basebackup -R` replica. A missing privilege shows as a
// failed start or a 500 (a replica's permission error is not a connection failure, so it is not
// hidden by reading the primary), and the recall must be the replica's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { exited, spawnService, type ServiceProcess } from './support/process.js';
import { postgresUnavailable, replicaCaughtUp, startPrimary, startReplica, type PgCluster } from './support/postgres.js';
import { parseSamples, sample } from './support/prometheus.js';
import { del, get, post, tempDir } from './support/service.js';

const unavailable = postgresUnavailable();

describe('a node whose roles hold only the documented privileges (PostgreSQL)', { skip: unavailable ?? false }, () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let node: ServiceProcess;
  const dir = tempDir('memrt-privileges-');

  const caughtUp = () => replicaCaughtUp(primary, replica);

  const recallSnapshots = async (side: string) =>
    sample(parseSamples((await get(node.base, '/metrics')).body), 'memory_runtime_recall_snapshots_total', { side });

  before(async () => {
    primary = await startPrimary();
    replica = await startReplica(primary);
    await primary.sql('CREATE ROLE memrt_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION');
    await primary.sql('CREATE ROLE memrt_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION');
    await primary.sql('CREATE DATABASE memories OWNER memrt_owner');
    // What the reader may do, granted before the service creates its tables.
    await primary.sql('ALTER DEFAULT PRIVILEGES FOR ROLE memrt_owner GRANT SELECT ON TABLES TO memrt_reader', 'memories');
    await caughtUp();
    const host = (cluster: PgCluster, role: string) => `postgres://${role}@127.0.0.1:${cluster.port}/memories`;
    node = await spawnService({
      SERVICE_DATABASE_URL: host(primary, 'memrt_owner'),
      SERVICE_READ_DATABASE_URL: host(replica, 'memrt_reader'),
      SERVICE_PATH: join(dir, 'memory.db'), SERVICE_EMBEDDER: 'hash', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0',
      SERVICE_READ_MAX_LAG_MS: '5000',
    });
  });

  after(async () => {
    if (node) {
      node.child.kill('SIGTERM');
      await exited(node.child);
    }
    await replica?.stop();
    await primary?.stop();
  });

  test('neither role is a superuser; the owner created the schema and the extension', async () => {
    assert.equal(await primary.sql("SELECT count(*) FROM pg_roles WHERE rolname IN ('memrt_owner', 'memrt_reader') AND (rolsuper OR rolreplication)"), '0');
    assert.equal(await primary.sql("SELECT tableowner FROM pg_tables WHERE tablename = 'memories'", 'memories'), 'memrt_owner');
    assert.equal(await primary.sql("SELECT count(*) FROM pg_extension WHERE extname = 'unaccent'", 'memories'), '1');
  });

  test('writes, a positioned recall served by the replica, consolidation and a delete all succeed', async () => {
    const written = await post(node.base, '/v1/remember', { entity: 'Quill', fact: 'Quill restores harpsichords in Ghent' });
    assert.equal(written.status, 201, JSON.stringify(written.body));
    const position = written.headers.get('memory-position');
    assert.ok(position, 'the write names its WAL position');
    await caughtUp();

    const replicaBefore = await recallSnapshots('replica');
    const primaryBefore = await recallSnapshots('primary');
    const recalled = await post(node.base, '/v1/recall', { query: 'harpsichords Ghent', limit: 3 }, { 'Memory-Position': position });
    assert.equal(recalled.status, 200, JSON.stringify(recalled.body));
    assert.deepEqual(recalled.body.memories.map((m: { id: string }) => m.id), [written.body.id]);
    assert.equal(await recallSnapshots('replica') - replicaBefore, 1, 'the reader role read it on the replica');
    assert.equal(await recallSnapshots('primary') - primaryBefore, 0);

    const consolidated = await post(node.base, '/v1/consolidate', {});
    assert.equal(consolidated.status, 200, JSON.stringify(consolidated.body));
    const deleted = await del(node.base, '/v1/entities/Quill');
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(await primary.sql("SELECT count(*) FROM memories WHERE content LIKE 'Quill%'", 'memories'), '0');
  });
});
