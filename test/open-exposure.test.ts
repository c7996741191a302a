// Auth off on a non-loopback address (issue 25, part 7): the real process logs one warning naming
// SERVICE_API_KEYS; on loopback, or with keys set, it does not. The service starts either way
// (auth is opt-in, as the spec says).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { exited, spawnService } from './support/process.js';
import { get, tempDir } from './support/service.js';
import { isLoopbackHost } from '../src/http/open-exposure.js';

/** The JSON log lines of a service started with `env`, once it answered a request and stopped. */
async function logOf(env: Record<string, string>): Promise<{ level: number; msg: string; variable?: string; host?: string }[]> {
  const svc = await spawnService({ SERVICE_PATH: join(tempDir('memrt-exposure-'), 'memory.db'), LOG_LEVEL: 'info', ...env });
  const auth = env.SERVICE_API_KEYS ? { authorization: `Bearer ${env.SERVICE_API_KEYS}` } : undefined;
  assert.equal((await get(svc.base, '/v1/health', auth)).status, 200);
  svc.child.kill('SIGTERM');
  await exited(svc.child);
  return svc.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
}

const WARNING = /authentication is off on a non-loopback address/;

test('auth off on 0.0.0.0: one warning naming SERVICE_API_KEYS; on loopback or with keys: none', async () => {
  const [open, loopback, keyed] = await Promise.all([
    logOf({ HOST: '0.0.0.0' }),
    logOf({ HOST: '127.0.0.1' }),
    logOf({ HOST: '0.0.0.0', SERVICE_API_KEYS: 'exposure-key' }),
  ]);
  const warned = open.filter((line) => WARNING.test(line.msg));
  assert.equal(warned.length, 1, JSON.stringify(open));
  assert.equal(warned[0].level, 40, 'a warning');
  assert.equal(warned[0].variable, 'SERVICE_API_KEYS');
  assert.match(warned[0].msg, /SERVICE_API_KEYS/);
  assert.equal(warned[0].host, '0.0.0.0');
  assert.deepEqual(loopback.filter((line) => WARNING.test(line.msg)), []);
  assert.deepEqual(keyed.filter((line) => WARNING.test(line.msg)), []);
});

test('loopback is 127.0.0.0/8, ::1 in its spellings and localhost; anything else is not', () => {
  for (const host of ['127.0.0.1', '127.9.8.7', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) {
    assert.equal(isLoopbackHost(host), true, host);
  }
  for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.20', '::ffff:10.0.0.1', 'example.com', '128.0.0.1', 'localhost.example.com']) {
    assert.equal(isLoopbackHost(host), false, host);
  }
});
