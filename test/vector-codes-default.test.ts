// The vector codes' default budget (SERVICE_VECTOR_CODES_MB unset): on, min(1,536 MiB, an eighth
// of the memory the process may use); 0 turns them off; an explicit value wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { totalmem } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultVectorCodesMb, loadConfig, MAX_DEFAULT_VECTOR_CODES_MB, memoryBounds, processMemoryBytes } from '../src/shared/config.js';

const GiB = 2 ** 30;

test('the default is an eighth of the memory, at most 1,536 MiB', () => {
  assert.equal(defaultVectorCodesMb(64 * GiB), MAX_DEFAULT_VECTOR_CODES_MB);
  assert.equal(defaultVectorCodesMb(12 * GiB), 1536);
  assert.equal(defaultVectorCodesMb(8 * GiB), 1024);
  assert.equal(defaultVectorCodesMb(2 * GiB), 256);
});

test('the memory the process may use is never more than the machine has', () => {
  const bytes = processMemoryBytes();
  assert.ok(bytes > 0 && bytes <= totalmem());
  assert.equal(memoryBounds().machine, totalmem());
});

test('the memory the process may use: the lowest limit below the machine; none, unknown (0) or above it: the machine', () => {
  const machine = 24 * GiB;
  assert.equal(processMemoryBytes({ machine, limits: [] }), machine, 'no limit');
  assert.equal(processMemoryBytes({ machine, limits: [0] }), machine, '0: none known');
  assert.equal(processMemoryBytes({ machine, limits: [2 * GiB] }), 2 * GiB, 'a limit below the machine');
  assert.equal(processMemoryBytes({ machine, limits: [64 * GiB] }), machine, 'a limit above the machine binds nothing');
  assert.equal(processMemoryBytes({ machine, limits: [2 ** 64] }), machine, "Node's 'no limit' (~2^64)");
  assert.equal(processMemoryBytes({ machine, limits: [0, 6 * GiB, 2 ** 64, 3 * GiB] }), 3 * GiB, 'the lowest of several');
  assert.equal(defaultVectorCodesMb(processMemoryBytes({ machine, limits: [2 * GiB] })), 256, 'a 2 GiB limit: an eighth of it');
});

test('unset, the service turns the codes on with the default; 0 turns them off; a value wins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'codes-default-'));
  try {
    const base = { SERVICE_PATH: dir };
    assert.equal(loadConfig(base).vectorCodesBytes, defaultVectorCodesMb() * 2 ** 20);
    assert.ok(loadConfig(base).vectorCodesBytes > 0);
    assert.equal(loadConfig({ ...base, SERVICE_VECTOR_CODES_MB: '0' }).vectorCodesBytes, 0);
    assert.equal(loadConfig({ ...base, SERVICE_VECTOR_CODES_MB: '64' }).vectorCodesBytes, 64 * 2 ** 20);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
