// SQLite migration 13 (PostgreSQL 9): the unfiltered episode list reads episodes in index order
// (no sort of the namespace's episodes), and facts stored under the narrower attribute rule are
// read again, so a new fact in another spelling supersedes them (docs/time.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { factAttribute } from '../src/shared/fact-attributes.js';
import { FACT_ATTRIBUTE_FUNCTION, MIGRATIONS } from '../src/shared/sql-schema.js';
import { ensureNamespace } from '../src/writer/sqlite/migrate.js';
import { EPISODES_LISTED } from '../src/workers/sqlite/read-store.js';
import { get, post, startTestService, tempDir } from './support/service.js';
import { POSTGRES_MIGRATIONS } from '../src/shared/postgres-schema.js';
import { connectWriter, type Sql } from '../src/writer/postgres/connect.js';
import { migratePostgres } from '../src/writer/postgres/migrate.js';
import { postgresUnavailable, startPrimary, type PgCluster } from './support/postgres.js';

test('a file at version 11: facts re-read by the wider rule, a later spelling supersedes them, episodes listed by the index', async () => {
  const path = join(tempDir('memrt-migrate13-'), 'old.db');
  const old = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
  old.function(FACT_ATTRIBUTE_FUNCTION, { deterministic: true }, (content) => (typeof content === 'string' ? factAttribute(content)?.attribute ?? null : null));
  for (const sql of MIGRATIONS.slice(0, 11)) old.exec(sql);
  old.pragma('user_version = 11');
  const ns = ensureNamespace(old, 'default');
  old.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-mig', ?, 'mig-ann', 'user', 0)").run(ns);
  const rowid = old.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability,
      difficulty, last_access_at, created_at, extraction_tier, entity_id, occurred_at, fact_attribute)
    VALUES ('fact-old', ?, 'semantic', ?, ?, 1, 1, 5, 0, 0, 1, 'e-mig', ?, ?)`)
    // As the rule before stored it: the American spelling was an attribute of its own.
    .run(ns, "mig-ann's favorite color is green", "mig-ann's favorite color is green", Date.parse('2021-01-01T00:00:00Z'), "'s favorite color").lastInsertRowid;
  old.prepare("INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, 'e-mig', 'owner')").run(rowid);
  old.close();

  const t = await startTestService({ SERVICE_PATH: path });
  try {
    const newer = await post(t.base, '/v1/remember', { entity: 'mig-ann', fact: "mig-ann's favourite colour is blue", valid_from: '2022-01-01T00:00:00Z' });
    assert.equal(newer.status, 201, JSON.stringify(newer.body));
    const history = await get(t.base, '/v1/memories/fact-old/history');
    assert.equal(history.status, 200, JSON.stringify(history.body));
    assert.equal(history.body.memory.superseded_by, newer.body.id);
  } finally {
    await t.close();
  }
  const file = openDatabase(path, { readonly: true });
  try {
    assert.equal(file.pragma('user_version', { simple: true }), MIGRATIONS.length);
    assert.equal(file.prepare("SELECT fact_attribute FROM memories WHERE id = 'fact-old'").pluck().get(), "'s favourite colour");
    const plan = (file.prepare(`EXPLAIN QUERY PLAN SELECT ep.id FROM episodes ep WHERE ${EPISODES_LISTED}
      ORDER BY ep.started_at DESC, ep.id DESC LIMIT @limit OFFSET @offset`).all({ ns, entity: null, limit: 50, offset: 0 }) as { detail: string }[])
      .map((step) => step.detail);
    assert.ok(plan.some((detail) => detail.includes('episodes_by_start')), plan.join('; '));
    // Ties on started_at are ordered by id per run of equal times ("RIGHT PART"), never the whole list.
    assert.ok(!plan.some((detail) => detail === 'USE TEMP B-TREE FOR ORDER BY'), plan.join('; '));
  } finally {
    file.close();
  }
});

const unavailable = postgresUnavailable();

describe('PostgreSQL migration 9', { skip: unavailable ? `PostgreSQL unavailable: ${unavailable}` : false }, () => {
  let primary: PgCluster;
  let sql: Sql;
  before(async () => {
    primary = await startPrimary();
    sql = connectWriter(primary.url);
  });
  after(async () => {
    await sql?.end();
    await primary?.stop();
  });

  test('a database at version 8: facts re-read by the wider rule, the episode index made', async () => {
    for (const migration of POSTGRES_MIGRATIONS.slice(0, 8)) await sql.unsafe(migration);
    await sql`CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`;
    await sql`INSERT INTO schema_version (version) VALUES (8)`;
    const [{ id: ns }] = await sql<{ id: number }[]>`INSERT INTO namespaces (name, created_at) VALUES ('default', 0) RETURNING id`;
    await sql`INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-mig', ${ns}, 'mig-ann', 'user', 0)`;
    const facts = [
      ['old-spelling', "mig-ann's favorite color is green", "'s favorite color"],
      ['old-phrasing', 'mig-ann relocated to Porto', null],
      ['unchanged', 'mig-ann likes tea', null],
    ] as const;
    for (const [id, content, attribute] of facts) {
      await sql`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty, last_access_at,
          created_at, extraction_tier, occurred_at, entity_id, fact_attribute)
        VALUES (${id}, ${ns}, 'semantic', ${content}, ${id}, 0.8, 1, 5, 0, 0, 1, 0, 'e-mig', ${attribute})`;
    }
    await migratePostgres(sql);
    const rows = await sql<{ id: string; fact_attribute: string | null }[]>`SELECT id, fact_attribute FROM memories ORDER BY id`;
    assert.deepEqual(rows.map((r) => [r.id, r.fact_attribute]), [['old-phrasing', 'lives in'], ['old-spelling', "'s favourite colour"], ['unchanged', null]]);
    const [{ version }] = await sql<{ version: number }[]>`SELECT max(version)::int AS version FROM schema_version`;
    assert.equal(version, POSTGRES_MIGRATIONS.length);
    const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'episodes_by_start'`;
    assert.equal(n, 1);
  });
});
