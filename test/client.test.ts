// The typed client library against the real server (spec §4 "Client conventions").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { DEFAULT_TIMEOUT_MS, MemoryClient, MemoryServiceError, MemoryTimeoutError } from '../src/client/index.js';
import { startTestService, type TestService } from './support/service.js';
import { DEFAULT_RECALL_LIMIT, ROUTES as CLIENT_ROUTES } from '../src/client/index.js';
import { OPERATION_NAMES, OPERATIONS, type OperationDeclaration, type RestBinding } from '../src/shared/operations/index.js';
import { defaultOf } from '../src/shared/defaults.js';
import { RecallBody } from '../src/shared/schemas.js';

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_API_KEYS: 'client-key' });
});
after(() => t.close());

describe('MemoryClient', () => {
  test('defaults: 30 s timeout, recall limit 5', async () => {
    const client = new MemoryClient({ baseUrl: t.base, apiKey: 'client-key' });
    assert.equal(DEFAULT_TIMEOUT_MS, 30_000);
    assert.equal(client.timeoutMs, 30_000);
    for (let i = 0; i < 7; i++) await client.remember({ entity: 'cl-user', fact: `client fact ${i}` });
    const r = await client.recall({ query: 'client fact' });
    assert.equal(r.memories.length, 5);
  });

  test('sends the API key as a Bearer header', async () => {
    const withKey = new MemoryClient({ baseUrl: t.base, apiKey: 'client-key' });
    assert.equal((await withKey.health()).status, 'ok');
    const withoutKey = new MemoryClient({ baseUrl: t.base });
    await assert.rejects(withoutKey.health(), (e: unknown) => e instanceof MemoryServiceError && e.status === 401);
  });

  test('non-2xx surfaces as an error with the status and the server error text', async () => {
    const client = new MemoryClient({ baseUrl: t.base, apiKey: 'client-key' });
    await assert.rejects(client.remember({ entity: 'x', fact: 'y', confidence: 3 }), (e: unknown) => {
      assert.ok(e instanceof MemoryServiceError);
      assert.equal(e.status, 400);
      assert.match(e.errorText, /confidence/);
      assert.equal(e.code, 'INVALID_VALUE');
      return true;
    });
    await assert.rejects(client.inspect({ entity: 'nobody' }), (e: unknown) => e instanceof MemoryServiceError && e.status === 404);
  });

  test('every call works end to end', async () => {
    const client = new MemoryClient({ baseUrl: t.base + '/', apiKey: 'client-key' });
    const entity = await client.createEntity({ name: 'cl-team', kind: 'team' });
    assert.equal(entity.kind, 'team');
    const { episode_id } = await client.startEpisode({ participants: ['cl-team'] });
    assert.deepEqual(await client.addMessage({ episode_id, role: 'user', content: 'I like hiking' }), { status: 'ok' });
    assert.equal((await client.endEpisode({ episode_id, outcome: 'success' })).memories_created, 1);
    const grouped = await client.recallGrouped({ query: 'hiking' });
    assert.equal(grouped.groups[0].session_id, episode_id);
    const inspect = await client.inspect({ entity: 'cl-team', limit: 10 });
    assert.equal(inspect.semantic.length, 1);
    assert.equal((await client.stats()).namespace, 'default');
    assert.deepEqual(Object.keys(await client.consolidate()).sort(), ['archived', 'decayed', 'promoted']);
  });

  test('delete takes a boolean flag; both values do the same snapshot-backed delete', async () => {
    const client = new MemoryClient({ baseUrl: t.base, apiKey: 'client-key' });
    await client.remember({ entity: 'cl/soft', fact: 'a' });
    await client.remember({ entity: 'cl/hard', fact: 'b' });
    const soft = await client.forget({ entity_name: 'cl/soft' });
    const hard = await client.forget({ entity_name: 'cl/hard', hard_delete: true });
    for (const r of [soft, hard]) {
      assert.equal(r.forgotten_count, 1);
      assert.equal(r.snapshot?.memory_count, 1);
    }
  });

  test('entities named "." and ".." can be forgotten (dot segments are not dropped from the path)', async () => {
    const client = new MemoryClient({ baseUrl: t.base, apiKey: 'client-key' });
    for (const name of ['.', '..', '...', './..', '%2E']) await client.remember({ entity: name, fact: `fact of ${name}` });
    for (const name of ['.', '..', '...', './..', '%2E']) {
      const r = await client.forget({ entity_name: name });
      assert.equal(r.forgotten_count, 1, name);
      await assert.rejects(client.forget({ entity_name: name }), (error: any) => error.status === 404, `${name} is gone`);
    }
    // Episode ids in the path: "." and ".." reach the episode routes (404 unknown episode), not
    // the compatibility routes /v1/episodes/message or /v1/episodes/end.
    for (const id of ['.', '..']) {
      await assert.rejects(client.addMessage({ episode_id: id, role: 'user', content: 'hi' }), (e: unknown) => e instanceof MemoryServiceError && e.status === 404, id);
      await assert.rejects(client.endEpisode({ episode_id: id }), (e: unknown) => e instanceof MemoryServiceError && e.status === 404, id);
    }
    // The verbatim path keeps the client conventions: Bearer key and error mapping.
    await assert.rejects(new MemoryClient({ baseUrl: t.base }).forget({ entity_name: '.' }), (e: unknown) => e instanceof MemoryServiceError && e.status === 401);
  });

  test('times out after timeoutMs', async () => {
    // A peer that accepts connections and never answers: a hung network, not a fake of our API.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const client = new MemoryClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 150 });
      const started = Date.now();
      await assert.rejects(client.health(), (e: unknown) => e instanceof MemoryTimeoutError && e.timeoutMs === 150);
      // …also when the path has a dot segment and goes out through node:http
      await assert.rejects(client.forget({ entity_name: '..' }), (e: unknown) => e instanceof MemoryTimeoutError && e.timeoutMs === 150);
      assert.ok(Date.now() - started < 5000);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

describe('the client route table', () => {
  test('matches each operation\'s first declared REST route, and the recall limit default', () => {
    for (const name of OPERATION_NAMES) {
      const declared: RestBinding = OPERATIONS[name].rest[0];
      const route = CLIENT_ROUTES[name];
      assert.equal(route.method, declared.method.toUpperCase(), name);
      assert.equal(route.path, declared.path, name);
      assert.deepEqual('params' in route ? route.params : {}, declared.params ?? {}, name);
      assert.equal(route.body, declared.body !== null, name);
      assert.equal('position' in route ? route.position : undefined, (OPERATIONS[name] as OperationDeclaration).position, `${name}: position`);
      assert.deepEqual('query' in route ? route.query : [], Object.keys(declared.query?.properties ?? {}), `${name}: query`);
    }
    assert.deepEqual(Object.keys(CLIENT_ROUTES).sort(), [...OPERATION_NAMES].sort());
    assert.equal(DEFAULT_RECALL_LIMIT, defaultOf(RecallBody, 'limit'));
  });
});
