// uWS silently falls back to a slow JS shim when its binary does not load: prove the native
// addon is what runs, and that the service refuses to start on the shim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { isNativeUws } from '../src/http/native-check.js';
import { tempDir } from './support/service.js';
import { spawnExpectingFailure } from './support/process.js';

test('uWebSockets.js is the native addon, and the check tells it from the fallback', () => {
  assert.equal(isNativeUws(), true);
  const require = createRequire(import.meta.url);
  const fallback = require('uWebSockets.js/dist/index.js');
  assert.equal(isNativeUws(fallback), false, 'the JS shim is recognised as such');
});

test('the service refuses to start on the JS fallback', async () => {
  const dir = tempDir();
  const { code, output } = await spawnExpectingFailure({ UWS_USE_FALLBACK: '1', SERVICE_PATH: join(dir, 'm.db') });
  assert.equal(code, 1);
  assert.match(output, /JavaScript fallback/);
});
