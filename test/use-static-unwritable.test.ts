// Reviewer's failing test: with no writable cache place the service's pre-pool step must not
// distil a table it cannot keep (every pool thread then distils again) nor report it cached.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { ensureTableCached } from '../src/workers/embedding/use-static.js';

test('use-static: ensureTableCached with no writable cache place fails instead of distilling for nothing', async () => {
  // Under a regular file: mkdir fails with ENOTDIR, as on a read-only install.
  const places = ['/etc/hostname/memory-runtime/t.f32', '/etc/hostname/tmp/t.f32'];
  await assert.rejects(ensureTableCached(places), /writable|cache/i);
  assert.ok(!places.some(existsSync));
});
