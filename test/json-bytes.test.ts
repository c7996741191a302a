// JsonBytes<T> is a brand only the pool's encoder gives: a plain Uint8Array must not pass for a
// serialised RecallResult. The check is the compiler's — this file fails to build if it passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonBytes } from '../src/shared/protocol/pool.js';
import type { RecallResult } from '../src/shared/schemas.js';
import { serialisedAnswer, valueOf } from '../src/core/operations/contract.js';

test('any Uint8Array is not JsonBytes; branded bytes read back as their value', () => {
  // @ts-expect-error a plain Uint8Array carries no brand
  const unbranded: JsonBytes<RecallResult> = new Uint8Array(0);
  assert.equal(unbranded.byteLength, 0);
  const bytes = new TextEncoder().encode('{"memories":[],"contradictions":[]}') as JsonBytes<RecallResult>;
  assert.deepEqual(valueOf(serialisedAnswer(bytes, false)), { memories: [], contradictions: [] });
});
