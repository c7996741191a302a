// Every documented error status: malformed JSON, non-objects, wrong types, missing fields,
// out-of-range values, oversize bodies, unknown routes. Bad input must change nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, get, post, startTestService, type TestService } from './support/service.js';
import { onPostgres } from './support/test-backend.js';
import { buildRoutes } from '../src/http/routes.js';

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_MAX_BODY_BYTES: String(64 * 1024) });
});
after(() => t.close());

function assertError(r: { status: number; body: any }, status: number, field?: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(typeof r.body.error, 'string');
  assert.ok(r.body.error.length > 0);
  if (field) assert.ok(r.body.error.includes(field), `error names '${field}': ${r.body.error}`);
}

/** Every route taking a JSON body at a fixed path, from the route table (not those that read none: test/unknown-fields). */
const BODY_ROUTES = buildRoutes().filter((route) => route.body && !route.bodyOptional && !route.path.includes(':')).map((route) => route.path);

describe('422: malformed or incomplete bodies', () => {
  test('the route table yields the body routes to check', () => {
    assert.ok(BODY_ROUTES.includes('/v1/remember') && BODY_ROUTES.includes('/v1/recall'), BODY_ROUTES.join(' '));
  });
  for (const path of BODY_ROUTES) {
    test(`${path}: invalid JSON, non-objects and empty bodies`, async () => {
      for (const raw of ['{bad', '{"a":', '[1,2]', '"text"', '42', 'null', '']) {
        assertError(await post(t.base, path, raw), 422);
      }
    });
  }

  test('missing required fields are named', async () => {
    assertError(await post(t.base, '/v1/entities', {}), 422, 'name');
    assertError(await post(t.base, '/v1/remember', { entity: 'x' }), 422, 'fact');
    assertError(await post(t.base, '/v1/remember', { fact: 'x' }), 422, 'entity');
    assertError(await post(t.base, '/v1/recall', {}), 422, 'query');
    assertError(await post(t.base, '/v1/recall_grouped', { limit: 3 }), 422, 'query');
    assertError(await post(t.base, '/v1/episodes/start', {}), 422, 'participants');
    assertError(await post(t.base, '/v1/inspect', {}), 422, 'entity');
    assertError(await post(t.base, '/v1/episodes/00000000-0000-4000-8000-000000000000/message', { role: 'user' }), 422, 'content');
  });

  test('wrong JSON types are named', async () => {
    assertError(await post(t.base, '/v1/entities', { name: 7 }), 422, 'name');
    assertError(await post(t.base, '/v1/remember', { entity: 'x', fact: 'y', confidence: 'high' }), 422, 'confidence');
    assertError(await post(t.base, '/v1/recall', { query: 'q', limit: '5' }), 422, 'limit');
    assertError(await post(t.base, '/v1/recall', { query: 'q', limit: 2.5 }), 422, 'limit');
    assertError(await post(t.base, '/v1/recall', { query: 'q', types: 'semantic' }), 422, 'types');
    assertError(await post(t.base, '/v1/recall', { query: 'q', entity: 12 }), 422, 'entity');
    assertError(await post(t.base, '/v1/recall', { query: ['q'] }), 422, 'query');
    assertError(await post(t.base, '/v1/recall_grouped', { query: 'q', max_groups: 'two' }), 422, 'max_groups');
    assertError(await post(t.base, '/v1/episodes/start', { participants: 'alice' }), 422, 'participants');
    assertError(await post(t.base, '/v1/episodes/start', { participants: ['a', 3] }), 422, 'participants[1]');
    assertError(await post(t.base, '/v1/episodes/x/end', { outcome: true }), 422, 'outcome');
    assertError(await post(t.base, '/v1/inspect', { entity: 'x', limit: null }), 422, 'limit');
  });
  test('deeply nested JSON is 422 naming the field, on every body route', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    assertError(await post(t.base, '/v1/remember', `{"entity":"a","fact":"b","x":${deep}}`), 422, 'x: nested more than 64 levels');
    for (const path of BODY_ROUTES) {
      assertError(await post(t.base, path, `{"extra":${deep}}`), 422, 'extra');
      assertError(await post(t.base, path, deep), 422);
    }
    assertError(await post(t.base, '/v1/recall', `{"query":"q","types":${deep}}`), 422, 'types');
    // Nesting up to the bound is still only a shape question: an unknown field is then refused as one.
    const ok = '['.repeat(63) + ']'.repeat(63);
    const unknown = await post(t.base, '/v1/remember', `{"entity":"nest-ok","fact":"b","x":${ok}}`);
    assertError(unknown, 400, "unknown field 'x'");
    assert.equal(unknown.body.code, 'UNKNOWN_FIELD');
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'nest-ok' })).status, 404);
  });
});

describe('400: values not allowed', () => {
  test('confidence outside [0, 1]', async () => {
    assertError(await post(t.base, '/v1/remember', { entity: 'x', fact: 'y', confidence: 1.01 }), 400, 'confidence');
    assertError(await post(t.base, '/v1/remember', { entity: 'x', fact: 'y', confidence: -0.1 }), 400, 'confidence');
  });

  test('unknown enum values', async () => {
    assertError(await post(t.base, '/v1/entities', { name: 'x', kind: 'robot' }), 400, 'kind');
    assertError(await post(t.base, '/v1/recall', { query: 'q', types: ['semantic', 'dream'] }), 400, 'types[1]');
    assertError(await post(t.base, '/v1/recall_grouped', { query: 'q', order: 'random' }), 400, 'order');
    // The spec: `order` neither "chronological" nor "relevance" is 400, whatever its JSON type.
    for (const order of [5, null, true, ['relevance'], { order: 'relevance' }, '']) {
      assertError(await post(t.base, '/v1/recall_grouped', { query: 'q', order }), 400, 'order');
    }
    // The other fields of the same body keep their shape errors.
    assertError(await post(t.base, '/v1/recall_grouped', { query: 5, order: 5 }), 422, 'query');
    assertError(await post(t.base, '/v1/episodes/x/end', { outcome: 'great' }), 400, 'outcome');
  });

  test('limits below 1 or above 1000, empty names and texts', async () => {
    assertError(await post(t.base, '/v1/recall', { query: 'q', limit: 0 }), 400, 'limit');
    assertError(await post(t.base, '/v1/recall', { query: 'q', limit: 1001 }), 400, 'limit');
    assertError(await post(t.base, '/v1/recall_grouped', { query: 'q', max_groups: 0 }), 400, 'max_groups');
    assertError(await post(t.base, '/v1/inspect', { entity: 'x', limit: -1 }), 400, 'limit');
    assertError(await post(t.base, '/v1/entities', { name: '' }), 400, 'name');
    assertError(await post(t.base, '/v1/entities', { name: 'n'.repeat(513) }), 400, 'name');
    assertError(await post(t.base, '/v1/remember', { entity: 'x', fact: '' }), 400, 'fact');
    assertError(await post(t.base, '/v1/recall', { query: '' }), 400, 'query');
    assertError(await post(t.base, '/v1/episodes/start', { participants: [] }), 400, 'participants');
    assertError(await post(t.base, '/v1/episodes/start', { participants: [''] }), 400, 'participants[0]');
  });

  test('strings that are not well-formed UTF-16 (lone surrogates) are 400 naming the field', async () => {
    const episode = (await post(t.base, '/v1/episodes/start', { participants: ['surrogate-ok'] })).body.episode_id;
    const cases: Array<[string, Record<string, unknown>, string]> = [];
    for (const bad of ['\ud800', '\udc00', 'a\udbffb', 'x\ud83d']) {
      cases.push(
        ['/v1/entities', { name: bad }, 'name'],
        ['/v1/remember', { entity: bad, fact: 'f' }, 'entity'],
        ['/v1/remember', { entity: 'surrogate-ok', fact: bad }, 'fact'],
        ['/v1/recall', { query: bad }, 'query'],
        ['/v1/recall', { query: 'q', entity: bad }, 'entity'],
        ['/v1/recall_grouped', { query: bad }, 'query'],
        ['/v1/episodes/start', { participants: ['surrogate-ok', bad] }, 'participants[1]'],
        ['/v1/inspect', { entity: bad }, 'entity'],
        [`/v1/episodes/${episode}/message`, { role: bad, content: 'c' }, 'role'],
        [`/v1/episodes/${episode}/message`, { role: 'user', content: bad }, 'content'],
        ['/v1/episodes/message', { episode_id: bad, role: 'user', content: 'c' }, 'episode_id'],
      );
    }
    for (const [path, body, field] of cases) {
      const r = await post(t.base, path, body);
      assertError(r, 400, `${field}: not well-formed`);
      assert.equal(r.body.code, 'INVALID_VALUE');
    }
    // Nothing was stored under U+FFFD, the name both lone surrogates used to become.
    assert.equal((await post(t.base, '/v1/inspect', { entity: '\ufffd' })).status, 404);
    // Well-formed text with surrogate pairs is fine.
    assert.equal((await post(t.base, '/v1/entities', { name: 'pair 🙂' })).status, 201);
  });

  test('bad percent-encoding in a path segment', async () => {
    assertError(await call(t.base, 'DELETE', '/v1/entities/%E0%A4%A'), 400);
  });
});

describe('other statuses', () => {
  test('413 for a body over the limit, by header or by streaming', async () => {
    const big = JSON.stringify({ entity: 'x', fact: 'a'.repeat(70 * 1024) });
    assertError(await post(t.base, '/v1/remember', big), 413);
    // chunked upload without Content-Length: the limit is enforced while reading
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('a'.repeat(16 * 1024)));
        controller.close();
      },
    });
    const response = await fetch(t.base + '/v1/remember', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    assert.equal(response.status, 413);
  });

  test('404 for unknown routes, 405 for a known path with the wrong method', async () => {
    assertError(await get(t.base, '/v1/nothing-here'), 404);
    assertError(await get(t.base, '/'), 404);
    const wrong = await get(t.base, '/v1/remember');
    assertError(wrong, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
  });

  test('bad input changes nothing', async () => {
    const before = (await get(t.base, '/v1/stats')).body;
    await post(t.base, '/v1/remember', { entity: 'unchanged', fact: 'x', confidence: 5 });
    await post(t.base, '/v1/remember', { entity: 'unchanged', fact: 42 });
    await post(t.base, '/v1/entities', { name: 'unchanged', kind: 'robot' });
    await post(t.base, '/v1/episodes/start', { participants: ['unchanged', 5] });
    assert.deepEqual((await get(t.base, '/v1/stats')).body, before);
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'unchanged' })).status, 404);
  });

  test('hostile strings never produce a 5xx', async () => {
    const hostile = ['"', "'", '""', 'AND', 'OR NOT', 'NEAR(a b)', '*', '^start', 'col:val', '(((', ')', '-', '+',
      '\u0000', '東京に住んでいます', 'مرحبا', '🙂🙃', '%s%n', '\\', 'a"b"c', '{"x":1}', 'SELECT * FROM memories;--'];
    for (const q of hostile) {
      const stored = await post(t.base, '/v1/remember', { entity: q, fact: `fact ${q}` });
      const unstorable = onPostgres && q.includes('\u0000');
      if (unstorable) {
        // PostgreSQL text cannot hold U+0000: the documented 400 naming the field (README), not a 5xx.
        assertError(stored, 400, 'entity');
        assert.equal(stored.body.code, 'INVALID_VALUE');
      } else {
        assert.equal(stored.status, 201, q);
      }
      // Reading by it still answers, as for any unknown entity when nothing could be stored.
      const r = await post(t.base, '/v1/recall', { query: q, entity: q });
      assert.equal(r.status, 200, q);
      const g = await post(t.base, '/v1/recall_grouped', { query: q });
      assert.equal(g.status, 200, q);
      const i = await post(t.base, '/v1/inspect', { entity: q });
      assert.equal(i.status, unstorable ? 404 : 200, q);
      const d = await call(t.base, 'DELETE', `/v1/entities/${encodeURIComponent(q)}`);
      assert.equal(d.status, unstorable ? 404 : 200, q);
    }
  });

  test('U+0000 in a query, name or id that is only looked up gets the answer for an unknown key', async () => {
    // SQLite text holds NUL, PostgreSQL text cannot: on both the lookups answer alike, never a 5xx.
    const nul = '\u0000';
    assert.equal((await post(t.base, '/v1/remember', { entity: 'nul-probe', fact: 'the nul probe drinks green tea' })).status, 201);
    const episode = (await post(t.base, '/v1/episodes/start', { participants: ['nul-probe'] })).body.episode_id as string;
    const found = await post(t.base, '/v1/recall', { query: `green tea${nul}`, limit: 50 });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.ok(found.body.memories.some((m: { content: string }) => m.content === 'the nul probe drinks green tea'), 'NUL is not part of any word');
    const none = await post(t.base, '/v1/recall', { query: 'green tea', entity: `nul-probe${nul}` });
    assert.equal(none.status, 200, JSON.stringify(none.body));
    assert.deepEqual(none.body.memories, []);
    assert.equal((await post(t.base, '/v1/recall', { query: nul })).status, 200);
    assert.equal((await post(t.base, '/v1/recall_grouped', { query: `tea${nul}` })).status, 200);
    const listed = await get(t.base, `/v1/entities?q=${encodeURIComponent(`nul-probe${nul}`)}`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.equal(listed.body.total, 0);
    const notFound = [
      await post(t.base, '/v1/inspect', { entity: `nul-probe${nul}` }),
      await post(t.base, `/v1/episodes/${encodeURIComponent(episode + nul)}/message`, { role: 'user', content: 'hi' }),
      await post(t.base, '/v1/episodes/message', { episode_id: episode + nul, role: 'user', content: 'hi' }),
      await post(t.base, `/v1/episodes/${encodeURIComponent(nul)}/end`, {}),
      await post(t.base, '/v1/episodes/end', { episode_id: episode + nul }),
      await call(t.base, 'DELETE', `/v1/entities/${encodeURIComponent(`nul-probe${nul}`)}`),
    ];
    for (const r of notFound) {
      assertError(r, 404);
      assert.equal(r.body.code, 'NOT_FOUND');
    }
    // Nothing was held up or broken: the real episode and entity still work.
    assert.equal((await post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'still here' })).status, 200);
    assert.equal((await post(t.base, '/v1/inspect', { entity: 'nul-probe' })).status, 200);
  });
});

describe('aborted uploads', () => {
  test('a client that disconnects mid-body does not leave the request in flight', async () => {
    const { connect } = await import('node:net');
    const url = new URL(t.base);
    for (let i = 0; i < 3; i++) {
      const socket = connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write('POST /v1/remember HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"entity":');
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
    }
    // Shutdown waits for in-flight requests: with a hung body read it would wait the whole grace
    // period (60 s). Only the close is timed, against half the grace: a margin no load closes.
    const other = await startTestService({ SERVICE_SHUTDOWN_GRACE_MS: '60000' });
    const socket = connect(Number(new URL(other.base).port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('POST /v1/remember HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"entity":');
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await other.close();
    assert.ok(Date.now() - started < 30_000, 'shutdown did not wait for a request whose client left');
    assert.equal((await get(t.base, '/v1/health')).status, 200);
  });
});
