// A typo never widens a request (issue 25, part 6): on every REST route and every MCP tool, one
// misspelt field — a body field, a query parameter, a tool argument — is 400 UNKNOWN_FIELD naming
// it, and nothing is stored or changed. Routes and tools are walked from the operation
// declarations, so one added later is checked too (it needs a valid sample below, or the first
// test fails). The few extras known clients send are accepted (cursor: null, hard_delete in
// DELETE's body, episode_id repeated in the body of the episode routes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { OPERATIONS, REST_BINDINGS, type OperationName } from '../src/shared/operations/index.js';
import { call, get, post, startTestService, type TestService } from './support/service.js';
import { mcpCall } from './support/mcp.js';

let t: TestService;
let episode = '';
let memoryId = '';

/** A valid input of each operation (its fields, path ones included), against the data seeded below. */
const samples = (): Record<OperationName, Record<string, unknown>> => ({
  health: {},
  stats: {},
  createEntity: { name: 'strict-new', kind: 'user' },
  remember: { entity: 'maria', fact: 'Maria likes figs', confidence: 0.5, valid_from: '2024-05-01T10:00:00Z' },
  rememberBatch: { facts: [{ entity: 'maria', fact: 'Maria likes plums', confidence: 0.5, valid_from: '2024-05-01T10:00:00Z' }] },
  recall: {
    query: 'figs', entity: 'maria', limit: 5, types: null, explain: false,
    as_of: '2030-01-01T00:00:00Z', include_superseded: false, since: '2000-01-01T00:00:00Z', until: '2030-01-01T00:00:00Z',
  },
  recallGrouped: {
    query: 'figs', entity: 'maria', limit: 5, order: 'relevance', max_groups: null, explain: false,
    as_of: '2030-01-01T00:00:00Z', include_superseded: false, since: '2000-01-01T00:00:00Z', until: '2030-01-01T00:00:00Z',
  },
  startEpisode: { participants: ['maria'], started_at: '2024-05-01T10:00:00Z' },
  importEpisode: {
    participants: ['maria'], started_at: '2024-05-01T10:00:00Z', outcome: 'success',
    messages: [{ role: 'user', content: 'Maria imports a chat', occurred_at: '2024-05-01T10:00:00Z' }],
  },
  addMessage: { episode_id: episode, role: 'user', content: 'Maria says hello', occurred_at: '2024-05-01T10:00:00Z' },
  endEpisode: { episode_id: episode, outcome: 'success' },
  forget: { entity_name: 'maria' },
  inspect: { entity: 'maria', limit: 10, include_superseded: false },
  memoryHistory: { memory_id: memoryId },
  forgetMemory: { memory_id: memoryId },
  consolidate: {},
  listEntities: { q: 'mar', limit: 10, offset: 0 },
  listEpisodes: { entity: 'maria', limit: 10, offset: 0 },
  listSnapshots: {},
  listNamespaces: {},
  restoreSnapshot: { snapshot_id: randomUUID() },
});

/** A misspelling of `name`: its last two letters swapped, or a short name's last letter doubled. */
const misspelt = (name: string) => (name.length >= 4 ? name.slice(0, -2) + name.at(-1) + name.at(-2) : name + name.at(-1));

/** What a bad request must leave exactly as it was. */
async function fingerprint(): Promise<string> {
  const [stats, entities, snapshots, maria] = await Promise.all([
    get(t.base, '/v1/stats'), get(t.base, '/v1/entities?limit=500'), get(t.base, '/v1/snapshots'),
    post(t.base, '/v1/inspect', { entity: 'maria', limit: 1000 }),
  ]);
  return JSON.stringify([stats.body, entities.body, snapshots.body, maria.body]);
}

function assertUnknown(r: { status: number; body: any }, name: string, where: string) {
  assert.equal(r.status, 400, `${where}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.code, 'UNKNOWN_FIELD', where);
  assert.ok(r.body.error.includes(`'${name}'`), `${where}: names '${name}': ${r.body.error}`);
}

before(async () => {
  t = await startTestService({ SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', SERVICE_EXTRACTOR_TIMEOUT_MS: '2000' });
  const stored = await post(t.base, '/v1/remember', { entity: 'maria', fact: 'Maria grows figs in Porto' });
  assert.equal(stored.status, 201);
  memoryId = stored.body.id;
  assert.equal((await post(t.base, '/v1/remember', { entity: 'jonas', fact: 'Jonas grows figs in Oslo' })).status, 201);
  episode = (await post(t.base, '/v1/episodes/start', { participants: ['maria'] })).body.episode_id;
  assert.equal((await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'Figs again today' })).status, 200);
});
after(() => t.close());

describe('REST: one misspelt field is 400 naming it, and changes nothing', () => {
  test('every operation has a sample (a new one must be added above)', () => {
    assert.deepEqual(Object.keys(samples()).sort(), Object.keys(OPERATIONS).sort());
  });

  test('every route, every field it takes, misspelt one at a time', async () => {
    const before = await fingerprint();
    let checked = 0;
    for (const { operation, binding } of REST_BINDINGS) {
      const sample = samples()[operation];
      const pathFields = Object.entries(binding.params ?? {});
      const path = binding.path.replace(/:(\w+)/g, (_, param: string) => encodeURIComponent(String(sample[binding.params?.[param] ?? param])));
      const where = `${binding.method.toUpperCase()} ${binding.path}`;
      if (binding.ignoresQuery) {
        // A probe's route: a cache-buster (or anything else) is ignored, and it answers as without.
        assert.equal((await get(t.base, `${path}?ts=1&entity=maria`)).status, 200, `${where} ignores its query string`);
        continue;
      }
      if (binding.method === 'get') {
        const names = Object.keys(binding.query?.properties ?? {});
        for (const name of names.length > 0 ? names : ['entity']) {
          assertUnknown(await get(t.base, `${path}?${misspelt(name)}=1`), misspelt(name), `${where} ?${misspelt(name)}`);
          checked++;
        }
        continue;
      }
      // Body fields: the declared body, or (a route that reads none) a field it might be thought to take.
      const schema = binding.body === undefined ? OPERATIONS[operation].input : binding.body;
      const body = Object.fromEntries(Object.entries(sample).filter(([key]) => !pathFields.some(([, field]) => field === key)));
      const names = schema ? Object.keys(schema.properties).filter((name) => !pathFields.some(([, field]) => field === name)) : ['entity'];
      for (const name of names) {
        const { [name]: value, ...rest } = body;
        const sent = { ...rest, [misspelt(name)]: value ?? 'maria' };
        assertUnknown(await call(t.base, binding.method.toUpperCase(), path, sent), misspelt(name), `${where} ${misspelt(name)}`);
        checked++;
      }
      // A query parameter the route does not list, beside a valid body.
      const query = Object.keys(binding.query?.properties ?? {});
      assertUnknown(await call(t.base, binding.method.toUpperCase(), `${path}?entity=maria`, binding.body === null ? undefined : body),
        'entity', `${where} ?entity`);
      assert.equal(query.includes('entity'), false);
      checked++;
    }
    assert.ok(checked > 30, `checked ${checked}`);
    assert.equal(await fingerprint(), before, 'a refused request changed something');
  });

  test("the issue's three: entitiy on recall, conf on remember, entity on recall_grouped", async () => {
    const before = await fingerprint();
    const typo = await post(t.base, '/v1/recall', { query: 'figs', entitiy: 'maria' });
    assertUnknown(typo, 'entitiy', 'recall');
    assert.match(typo.body.error, /did you mean 'entity'\?/);
    assert.match(typo.body.error, /takes query, entity, limit, types, explain/);
    assertUnknown(await post(t.base, '/v1/remember', { entity: 'maria', fact: 'Maria hates figs', conf: 0.1 }), 'conf', 'remember');
    assert.equal(await fingerprint(), before);
    // recall_grouped takes entity as recall does: only that entity's memories; one never stored: none.
    const maria = await post(t.base, '/v1/recall_grouped', { query: 'figs', entity: 'maria' });
    assert.equal(maria.status, 200);
    const contents = maria.body.groups.flatMap((g: any) => g.memories.map((m: any) => m.content));
    assert.ok(contents.includes('Maria grows figs in Porto'), contents.join(' | '));
    assert.ok(!contents.some((c: string) => c.includes('Jonas')), contents.join(' | '));
    const nobody = await post(t.base, '/v1/recall_grouped', { query: 'figs', entity: 'nobody-at-all' });
    assert.deepEqual(nobody.body, { groups: [] });
    const everyone = await post(t.base, '/v1/recall_grouped', { query: 'figs' });
    assert.ok(everyone.body.groups.length > maria.body.groups.length);
  });

  test('a misspelt required field is reported as the unknown field, not only as missing', async () => {
    assertUnknown(await post(t.base, '/v1/recall', { querry: 'figs' }), 'querry', 'recall');
    assertUnknown(await post(t.base, '/v1/inspect', { entity: 'maria', limit: 5, x: 1, y: 2 }), 'x', 'inspect');
  });
});

test('probes may add cache-busters: health, metrics and the OpenAPI document ignore a query string; other routes still refuse one', async () => {
  for (const path of ['/v1/health?ts=1', '/v1/health?_=1700000000&probe=lb', '/metrics?ts=1', '/v1/openapi.json?v=2']) {
    assert.equal((await get(t.base, path)).status, 200, path);
  }
  assertUnknown(await get(t.base, '/v1/stats?ts=1'), 'ts', 'GET /v1/stats ?ts');
  assertUnknown(await get(t.base, '/v1/entities?qq=maria'), 'qq', 'GET /v1/entities ?qq');
});

describe('accepted extras', () => {
  test('cursor: null on recall, recall_grouped and inspect; any other cursor is 400', async () => {
    for (const [path, body] of [['/v1/recall', { query: 'figs' }], ['/v1/recall_grouped', { query: 'figs' }], ['/v1/inspect', { entity: 'maria' }]] as const) {
      assert.equal((await post(t.base, path, { ...body, cursor: null })).status, 200, path);
      const paged = await post(t.base, path, { ...body, cursor: 'page-2' });
      assert.equal(paged.status, 400, path);
      assert.equal(paged.body.code, 'INVALID_VALUE');
      assert.match(paged.body.error, /cursor/);
    }
  });

  test('hard_delete in the body of DELETE; any other body field refuses the delete', async () => {
    assert.equal((await post(t.base, '/v1/remember', { entity: 'hd-body', fact: 'Hd body keeps bees' })).status, 201);
    assertUnknown(await call(t.base, 'DELETE', '/v1/entities/hd-body', { hard: true }), 'hard', 'DELETE');
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'hd-body' })).body.semantic.length, 1);
    const r = await call(t.base, 'DELETE', '/v1/entities/hd-body?hard_delete=true', { hard_delete: true });
    assert.equal(r.status, 200);
    assert.equal(r.body.forgotten_count, 1);
  });

  test('episode_id repeated in the body of the episode routes: the same id is fine, another is 400', async () => {
    const id = (await post(t.base, '/v1/episodes/start', { participants: ['ep-repeat'] })).body.episode_id;
    const other = (await post(t.base, '/v1/episodes/start', { participants: ['ep-repeat'] })).body.episode_id;
    assert.equal((await post(t.base, `/v1/episodes/${id}/message`, { episode_id: id, role: 'user', content: 'Said once' })).status, 200);
    const wrong = await post(t.base, `/v1/episodes/${id}/message`, { episode_id: other, role: 'user', content: 'Said to the wrong one' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.error, /episode_id/);
    const turns = (await post(t.base, '/v1/inspect', { entity: 'ep-repeat' })).body.episodic.map((m: any) => m.content);
    assert.deepEqual(turns, ['Said once']);
    assert.equal((await post(t.base, `/v1/episodes/${id}/end`, { episode_id: other })).status, 400);
    assert.equal((await post(t.base, `/v1/episodes/${id}/end`, { episode_id: id })).status, 200);
  });

  test('routes that read no body take none, or an empty one', async () => {
    assert.equal((await post(t.base, '/v1/consolidate')).status, 200);
    assert.equal((await post(t.base, '/v1/consolidate', {})).status, 200);
    assert.equal((await post(t.base, '/v1/consolidate', '[1]')).status, 422);
  });
});

describe('MCP: one misspelt argument is a tool error naming it, and changes nothing', () => {
  test('every tool lists a closed input schema, and refuses each argument misspelt', async () => {
    const listed = await fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    const tools = ((await listed.json()) as any).result.tools as { name: string; inputSchema: any }[];
    const byTool = Object.fromEntries(Object.entries(OPERATIONS).flatMap(([name, op]) => (op.mcp ? [[op.mcp.name, name as OperationName]] : [])));
    assert.deepEqual(tools.map((tool) => tool.name).sort(), Object.keys(byTool).sort());
    const before = await fingerprint();
    for (const tool of tools) {
      assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
      const sample = samples()[byTool[tool.name]];
      const names = Object.keys(tool.inputSchema.properties ?? {});
      for (const name of names.length > 0 ? names : ['entity']) {
        const { [name]: value, ...rest } = sample;
        const result = await mcpCall(t.base, tool.name, { ...rest, [misspelt(name)]: value ?? 'maria' });
        assert.equal(result.isError, true, `${tool.name} ${misspelt(name)}`);
        assert.ok(result.content[0].text.includes(`unknown argument '${misspelt(name)}'`), `${tool.name}: ${result.content[0].text}`);
      }
    }
    assert.equal(await fingerprint(), before, 'a refused tool call changed something');
  });
});

describe('the OpenAPI document', () => {
  test('every request body and query is closed', async () => {
    const doc = (await get(t.base, '/v1/openapi.json')).body;
    const resolve = (schema: any) => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
    let bodies = 0;
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        const schema = op.requestBody?.content['application/json'].schema;
        if (!schema) continue;
        assert.equal(resolve(schema).additionalProperties, false, `${method} ${path}`);
        assert.ok(op.responses['400'], `${method} ${path} answers 400`);
        bodies++;
      }
    }
    assert.ok(bodies >= 12, String(bodies));
    assert.match(doc.components.responses.BadRequest.description, /UNKNOWN_FIELD/);
  });
});
