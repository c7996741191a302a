// Logs: one JSON access line per request with a request id, and API keys never appear in the
// output — not for a valid key, a wrong key, a key in the query string or in X-Request-Id,
// nor any request body. Runs the service as a child process and captures everything it prints.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { exited, spawnService, type ServiceProcess } from './support/process.js';
import { call, tempDir } from './support/service.js';

const KEYS = ['sk-live-LOGTEST-alpha-7f3a9c', 'sk-live-LOGTEST-beta-22b1e0'];
const WRONG = 'sk-wrong-LOGTEST-gamma-91d4';
const BODY_MARKER = 'BODYMARKER-lives-in-Lisbon-5521';

let dir: string;
let svc: ServiceProcess;
let output = '';
const echoed: string[] = [];

before(async () => {
  dir = tempDir('memrt-log-');
  svc = await spawnService({ SERVICE_PATH: join(dir, 'memory.db'), SERVICE_API_KEYS: KEYS.join(','), LOG_LEVEL: 'info' });
  const h = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });
  const replies = [
    await call(svc.base, 'GET', '/v1/health', undefined, h(KEYS[0])),
    await call(svc.base, 'POST', '/v1/remember', { entity: 'log-user', fact: BODY_MARKER }, h(KEYS[1])),
    await call(svc.base, 'POST', '/v1/recall', { query: BODY_MARKER }, h(KEYS[0], { 'x-request-id': 'trace-0001' })),
    await call(svc.base, 'POST', '/v1/remember', { entity: 'log-user', fact: BODY_MARKER }, h(WRONG)),
    await call(svc.base, 'POST', '/v1/remember', `{"entity": "${BODY_MARKER}", broken`, h(KEYS[0])),
    await call(svc.base, 'GET', `/v1/stats?api_key=${KEYS[1]}`, undefined, h(KEYS[1])),
    await call(svc.base, 'GET', '/v1/health', undefined, h(KEYS[0], { 'x-request-id': KEYS[1] })),
    await call(svc.base, 'GET', `/nothing/${KEYS[0]}`, undefined, h(WRONG)),
    await call(svc.base, 'DELETE', '/v1/entities/nobody-here', undefined, h(KEYS[0])),
    await call(svc.base, 'GET', '/metrics', undefined, h(KEYS[0])),
  ];
  // The key in a query string is not a way to authenticate: an unknown parameter, refused (400), and never logged.
  assert.deepEqual(replies.map((r) => r.status), [200, 201, 200, 401, 422, 400, 200, 401, 404, 200]);
  for (const r of replies) echoed.push(r.headers.get('x-request-id') ?? '');
  svc.child.kill('SIGTERM');
  await exited(svc.child);
  output = svc.output();
});

test('no API key, wrong key or request body appears anywhere in the output', () => {
  for (const secret of [...KEYS, WRONG, BODY_MARKER]) assert.ok(!output.includes(secret), `output contains ${secret}`);
  // Not even a long prefix of one.
  for (const secret of [...KEYS, WRONG]) assert.ok(!output.includes(secret.slice(0, 16)), `output contains a prefix of ${secret}`);
});

test('every request has one JSON access line with id, method, route pattern, status and duration', () => {
  const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const access = lines.filter((l) => l.msg === 'request');
  assert.equal(access.length, echoed.length);
  for (const line of access) {
    assert.equal(line.level, 30, 'info');
    assert.equal(typeof line.reqId, 'string');
    assert.equal(typeof line.method, 'string');
    assert.equal(typeof line.route, 'string');
    assert.equal(typeof line.status, 'number');
    assert.equal(typeof line.ms, 'number');
  }
  assert.deepEqual(access.map((l) => l.reqId), echoed, 'the echoed X-Request-Id is the logged one');
  assert.deepEqual(access.map((l) => l.status), [200, 201, 200, 401, 422, 400, 200, 401, 404, 200]);
  assert.deepEqual(access.map((l) => l.route), [
    '/v1/health', '/v1/remember', '/v1/recall', '/v1/remember', '/v1/remember', '/v1/stats', '/v1/health', 'unmatched',
    '/v1/entities/:entity_name', '/metrics',
  ]);
});

test('a sane incoming X-Request-Id is kept; a key or junk is replaced', () => {
  assert.equal(echoed[2], 'trace-0001');
  assert.notEqual(echoed[6], KEYS[1]);
  assert.match(echoed[6], /^[0-9a-f-]{36}$/);
  for (const id of echoed) assert.match(id, /^[A-Za-z0-9._:-]{1,128}$/);
  assert.equal(new Set(echoed.filter((id) => id !== 'trace-0001')).size, echoed.length - 1, 'generated ids are unique');
});
