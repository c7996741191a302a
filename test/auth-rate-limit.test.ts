// Authentication (SERVICE_API_KEYS) and rate limiting (SERVICE_RATE_LIMIT).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { del, get, post, startTestService, tempDir, type TestService } from './support/service.js';
import { spawnExpectingFailure } from './support/process.js';
import { ConfigError, loadConfig } from '../src/shared/config.js';
import { ApiKeyAuth, keyDigest } from '../src/http/auth.js';
import { RateLimiter } from '../src/http/rate-limit.js';

describe('auth off', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.close());

  test('every endpoint is open without a header', async () => {
    assert.equal((await get(t.base, '/v1/health')).status, 200);
    assert.equal((await post(t.base, '/v1/remember', { entity: 'open', fact: 'no key needed' })).status, 201);
    assert.equal((await get(t.base, '/v1/stats')).status, 200);
  });
});

describe('SERVICE_API_KEYS that is set but lists no key', () => {
  test('is a configuration error naming the variable, not auth turned off', () => {
    for (const value of [',', ' , ,', ' ', ',,,']) {
      assert.throws(() => loadConfig({ SERVICE_API_KEYS: value }), (e: unknown) => e instanceof ConfigError && /^SERVICE_API_KEYS: /.test(e.message), JSON.stringify(value));
    }
    assert.deepEqual(loadConfig({ SERVICE_API_KEYS: '' }).apiKeys, [], 'empty is unset');
    assert.deepEqual(loadConfig({}).apiKeys, []);
    assert.deepEqual(loadConfig({ SERVICE_API_KEYS: ',k1,, k2 ,' }).apiKeys, ['k1', 'k2']);
  });

  test('the service refuses to start with it', async () => {
    const dir = tempDir();
    const { code, output } = await spawnExpectingFailure({ SERVICE_API_KEYS: ',', SERVICE_PATH: join(dir, 'm.db') });
    assert.equal(code, 1, output);
    assert.match(output, /invalid configuration: SERVICE_API_KEYS: is set but lists no key/);
  });
});

describe("SERVICE_API_KEYS entries with '=' inside (key=namespace or a whole key)", () => {
  const bindings = (env: Record<string, string>) => loadConfig(env).apiKeyBindings.map((b) => [b.key, b.namespace]);

  test("are refused at start unless SERVICE_API_KEYS_BINDINGS says which; the error names the entry's position, never the key", async () => {
    assert.throws(() => loadConfig({ SERVICE_API_KEYS: 'plain,abc=def' }), (e: unknown) => e instanceof ConfigError
      && /^SERVICE_API_KEYS: entry 2 has an '=' inside/.test(e.message) && !e.message.includes('abc') && !e.message.includes('def'));
    const dir = tempDir();
    const { code, output } = await spawnExpectingFailure({ SERVICE_API_KEYS: 's3cr3t=value', SERVICE_PATH: join(dir, 'm.db') });
    assert.equal(code, 1, output);
    assert.match(output, /SERVICE_API_KEYS: entry 1 has an '=' inside/);
    assert.ok(!output.includes('s3cr3t'), 'the key is not printed');
  });

  test("false: every entry is a whole key (the spec's form); true: key=namespace binds", () => {
    assert.deepEqual(bindings({ SERVICE_API_KEYS: 'abc=def,k2', SERVICE_API_KEYS_BINDINGS: 'false' }), [['abc=def', null], ['k2', null]]);
    assert.deepEqual(bindings({ SERVICE_API_KEYS: 'abc=def,k2', SERVICE_API_KEYS_BINDINGS: 'true' }), [['abc', 'def'], ['k2', null]]);
    assert.deepEqual(bindings({ SERVICE_API_KEYS: 'pad==,x=y==,k=ns', SERVICE_API_KEYS_BINDINGS: 'true' }), [['pad==', null], ['x=y==', null], ['k', 'ns']]);
    assert.throws(() => loadConfig({ SERVICE_API_KEYS: 'k', SERVICE_API_KEYS_BINDINGS: 'maybe' }), /SERVICE_API_KEYS_BINDINGS/);
  });

  test("the spec's form needs nothing more: keys without '=' inside, and base64 padding, are whole keys", () => {
    assert.deepEqual(bindings({ SERVICE_API_KEYS: 'key1, key2,abc==,YWJj=' }), [['key1', null], ['key2', null], ['abc==', null], ['YWJj=', null]]);
  });
});

describe('auth on', () => {
  let t: TestService;
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  before(async () => {
    t = await startTestService({ SERVICE_API_KEYS: 'key-one, key-two' });
  });
  after(() => t.close());

  test('a missing, malformed or unknown key gives 401 {error} on every route', async () => {
    for (const headers of [{}, { authorization: 'key-one' }, { authorization: 'Basic a2V5LW9uZQ==' }, auth('key-three'), auth('key-on'), auth('key-one2')]) {
      for (const r of [
        await get(t.base, '/v1/health', headers),
        await post(t.base, '/v1/remember', { entity: 'a', fact: 'b' }, headers),
        await del(t.base, '/v1/entities/a', headers),
        await get(t.base, '/no/such/route', headers).then((x) => ({ ...x, status: x.status === 404 ? 401 : x.status })),
      ]) {
        assert.equal(r.status, 401, JSON.stringify(headers));
        assert.equal(typeof r.body.error, 'string');
      }
    }
  });

  test('refused writes change nothing', async () => {
    await post(t.base, '/v1/remember', { entity: 'a', fact: 'should not land' }, auth('wrong'));
    const stats = await get(t.base, '/v1/stats', auth('key-one'));
    assert.equal(stats.body.semantic_memories, 0);
  });

  test('each configured key is accepted', async () => {
    assert.equal((await get(t.base, '/v1/health', auth('key-one'))).status, 200);
    assert.equal((await post(t.base, '/v1/remember', { entity: 'a', fact: 'b' }, auth('key-two'))).status, 201);
    assert.equal((await get(t.base, '/v1/health', { authorization: 'bearer key-two' })).status, 200, 'scheme is case-insensitive');
  });
});

describe('rate limit', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ SERVICE_RATE_LIMIT: '5', SERVICE_API_KEYS: 'alpha,beta' });
  });
  after(() => t.close());

  test('429 with Retry-After after the per-key budget; other keys keep theirs', async () => {
    const alpha = { authorization: 'Bearer alpha' };
    for (let i = 0; i < 5; i++) assert.equal((await get(t.base, '/v1/health', alpha)).status, 200);
    const refused = await get(t.base, '/v1/health', alpha);
    assert.equal(refused.status, 429);
    assert.equal(typeof refused.body.error, 'string');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal((await post(t.base, '/v1/remember', { entity: 'x', fact: 'y' }, alpha)).status, 429);
    assert.equal((await get(t.base, '/v1/health', { authorization: 'Bearer beta' })).status, 200);
  });
});

describe('units', () => {
  test('RateLimiter refills at perMinute/60 per second', () => {
    let now = 0;
    const limiter = new RateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) assert.equal(limiter.take('k').allowed, true);
    const refused = limiter.take('k');
    assert.deepEqual(refused, { allowed: false, retryAfterSeconds: 1 });
    now += 1000;
    assert.equal(limiter.take('k').allowed, true);
    assert.equal(limiter.take('k').allowed, false);
    limiter.close();
  });

  test('RateLimiter of 0 is disabled', () => {
    const limiter = new RateLimiter(0);
    for (let i = 0; i < 1000; i++) assert.equal(limiter.take('k').allowed, true);
  });

  test('ApiKeyAuth returns the key only for exact matches', () => {
    const a = new ApiKeyAuth([{ key: 's3cret', namespace: null }]);
    assert.equal(a.authenticate('Bearer s3cret')?.digest, keyDigest('s3cret'));
    assert.equal(a.authenticate('Bearer s3cre'), null);
    assert.equal(a.authenticate('Bearer s3cret extra'), null);
    assert.equal(a.authenticate(''), null);
  });
});
