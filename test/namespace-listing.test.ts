// GET /v1/namespaces (issue 25): one page of the namespaces with the counts GET /v1/stats gives
// each, in creation order, at most MAX_NAMESPACE_PAGE a page, with the total; operator keys only.
// Runs on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, post, startTestService, type TestService } from './support/service.js';
import { MAX_NAMESPACE_PAGE } from '../src/shared/schemas.js';

const OPERATOR = 'op-key-listing-0001';
const BOUND = 'key-bound-listing-0001';
const auth = (key: string, namespace?: string) => ({ authorization: `Bearer ${key}`, ...(namespace ? { 'memory-namespace': namespace } : {}) });
// Created in this order (default first: the service's own).
const TENANTS = ['tenant-1', 'tenant-2', 'tenant-3', 'tenant-4'];

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_API_KEYS: `${OPERATOR},${BOUND}=tenant-2`, SERVICE_API_KEYS_BINDINGS: 'true' });
  for (const [i, ns] of TENANTS.entries()) {
    // Tenant i holds i + 1 facts and one episodic turn.
    for (let k = 0; k <= i; k++) assert.equal((await post(t.base, '/v1/remember', { entity: `person-${k}`, fact: `${ns} fact ${k}` }, auth(OPERATOR, ns))).status, 201);
    const episode = await post(t.base, '/v1/episodes/start', { participants: ['person-0'] }, auth(OPERATOR, ns));
    assert.ok(episode.status < 300, JSON.stringify(episode.body));
    const message = await post(t.base, `/v1/episodes/${episode.body.episode_id}/message`, { role: 'user', content: `${ns} says hello` }, auth(OPERATOR, ns));
    assert.ok(message.status < 300, JSON.stringify(message.body));
  }
});
after(() => t.close());

const list = (query = '', key = OPERATOR) => call(t.base, 'GET', `/v1/namespaces${query}`, undefined, auth(key));

test('every namespace with the counts its own stats give, in creation order, and the total', async () => {
  const { status, body } = await list();
  assert.equal(status, 200);
  assert.equal(body.total, TENANTS.length + 1);
  assert.deepEqual(body.namespaces.map((n: { namespace: string }) => n.namespace), ['default', ...TENANTS]);
  for (const listed of body.namespaces) {
    const stats = await call(t.base, 'GET', '/v1/stats', undefined, auth(OPERATOR, listed.namespace));
    assert.deepEqual(listed, stats.body);
  }
  assert.equal(body.namespaces[3].semantic_memories, 3);
  assert.equal(body.namespaces[3].episodic_memories, 1);
});

test('a page at a time: limit and offset, the total unchanged', async () => {
  const first = await list('?limit=2');
  const second = await list('?limit=2&offset=2');
  const last = await list('?limit=2&offset=4');
  const beyond = await list('?offset=50');
  assert.deepEqual([first, second, last, beyond].map((r) => r.status), [200, 200, 200, 200]);
  assert.deepEqual([...first.body.namespaces, ...second.body.namespaces, ...last.body.namespaces], (await list()).body.namespaces);
  assert.equal(last.body.namespaces.length, 1);
  assert.deepEqual(beyond.body, { namespaces: [], total: TENANTS.length + 1 });
  for (const r of [first, second, last]) assert.equal(r.body.total, TENANTS.length + 1);
});

test('a bad page is 400 naming the field; a bound key is 403', async () => {
  for (const [query, field] of [['?limit=0', 'limit'], [`?limit=${MAX_NAMESPACE_PAGE + 1}`, 'limit'], ['?offset=-1', 'offset'], ['?limit=abc', 'limit'], ['?lmit=2', 'lmit']]) {
    const r = await list(query);
    assert.equal(r.status, 400, query);
    assert.match(JSON.stringify(r.body), new RegExp(field), query);
  }
  const bound = await list('', BOUND);
  assert.equal(bound.status, 403);
  assert.equal(bound.body.code, 'NAMESPACE_FORBIDDEN');
  assert.ok(!JSON.stringify(bound.body).includes('tenant-1'));
});

test('a namespace created after a listing: the next page counts and lists it, every offset still its place', async () => {
  const before = await list();
  assert.equal((await post(t.base, '/v1/remember', { entity: 'late', fact: 'a late tenant' }, auth(OPERATOR, 'tenant-late'))).status, 201);
  const after = await list();
  assert.equal(after.body.total, before.body.total + 1);
  assert.deepEqual(after.body.namespaces.map((n: { namespace: string }) => n.namespace), [...before.body.namespaces.map((n: { namespace: string }) => n.namespace), 'tenant-late']);
  // Each position one page of one, as the whole list has it.
  for (let offset = 0; offset < after.body.total; offset++) {
    const one = await list(`?limit=1&offset=${offset}`);
    assert.deepEqual(one.body, { namespaces: [after.body.namespaces[offset]], total: after.body.total }, `offset ${offset}`);
  }
});
