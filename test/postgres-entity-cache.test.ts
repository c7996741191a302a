// The PostgreSQL writer's entity cache is bounded in total, not per namespace (issue 25 review:
// 256 namespace contexts × 10,000 entries each could hold 2.56 M entities). No database is
// needed: the rows' cache is filled the way committed flushes fill it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import postgres from 'postgres';
import { PostgresWriteStore } from '../src/writer/postgres/adapter.js';
import { ENTITY_CACHE_MAX, type PgRowState } from '../src/writer/postgres/row-state.js';
import { NAMESPACE_CONTEXTS } from '../src/writer/commands/namespaces.js';
import { loadConfig } from '../src/shared/config.js';
import type { EntityRecord } from '../src/shared/schemas.js';

test('entities cached across many namespaces stay within ENTITY_CACHE_MAX in total, the most recent kept', async () => {
  // Never connected: nothing here runs a query.
  const sql = postgres('postgres://nobody@127.0.0.1:9/none', { max: 1 });
  const store = new PostgresWriteStore(sql as never, loadConfig({ SERVICE_EMBEDDER: 'hash' }), 1);
  const stateOf = (id: number): PgRowState => (store as unknown as { stateOf(id: number): PgRowState }).stateOf(id);
  const perNamespace = Math.ceil((2 * ENTITY_CACHE_MAX) / NAMESPACE_CONTEXTS);
  const entity = (ns: number, i: number): EntityRecord => ({ id: `${ns}-${i}`, name: `person ${i}`, kind: 'person', created_at: 0 } as unknown as EntityRecord);
  for (let ns = 1; ns <= NAMESPACE_CONTEXTS; ns++) {
    const state = stateOf(ns);
    state.beginFlush(true);
    for (let i = 0; i < perNamespace; i++) state.metEntity(entity(ns, i));
    state.endFlush(true);
  }
  let cached = 0;
  for (let ns = 1; ns <= NAMESPACE_CONTEXTS; ns++) {
    const state = stateOf(ns);
    for (let i = 0; i < perNamespace; i++) if (state.cachedEntity(`person ${i}`)) cached++;
  }
  assert.ok(cached <= ENTITY_CACHE_MAX, `${cached} entities cached across ${NAMESPACE_CONTEXTS} namespaces`);
  const last = stateOf(NAMESPACE_CONTEXTS);
  assert.equal(last.cachedEntity('person 0')?.id, `${NAMESPACE_CONTEXTS}-0`, 'the most recently written namespace keeps its entities (and only its own)');
  await sql.end({ timeout: 0 });
});
