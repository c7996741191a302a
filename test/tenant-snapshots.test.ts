// A bound key learns nothing of another namespace's snapshots (issue 25 review): restoring one
// answers exactly what an unknown id answers (404), even when that snapshot is unusable — the
// check used to answer SNAPSHOT_UNUSABLE before it looked at the namespace. SQLite: the
// snapshot is a file this test can break.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startTestService, type TestService } from './support/service.js';
import { onPostgres } from './support/test-backend.js';

const OPERATOR = 'op-key-snapshots-1';
const KEY_A = 'key-a-snapshots-1';
const KEY_B = 'key-b-snapshots-1';
const as = (key: string) => ({ authorization: `Bearer ${key}` });

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_API_KEYS: `${OPERATOR},${KEY_A}=tenant-a,${KEY_B}=tenant-b`, SERVICE_API_KEYS_BINDINGS: 'true', SERVICE_EMBEDDER: 'hash' });
});
after(() => t.close());

/** The answer with the id in its message replaced, so two ids' answers can be compared. */
const shape = (r: { status: number; body: { code: string; error: string } }, id: string) => ({ status: r.status, code: r.body.code, error: r.body.error.replaceAll(id, '<id>') });

test("restoring another namespace's unusable snapshot is the same 404 as an unknown id", { skip: onPostgres && 'PostgreSQL snapshots are rows, not files to break' }, async () => {
  assert.equal((await call(t.base, 'POST', '/v1/remember', { entity: 'maria', fact: 'tenant b keeps maria' }, as(KEY_B))).status, 201);
  const deleted = await call(t.base, 'DELETE', '/v1/entities/maria', undefined, as(KEY_B));
  assert.equal(deleted.status, 200);
  const foreign: string = deleted.body.snapshot.snapshot_id;
  writeFileSync(join(t.dir, 'snapshots', `${foreign}.json`), 'not a snapshot at all');
  const unknown = randomUUID();
  const ofForeign = await call(t.base, 'POST', `/v1/snapshots/${foreign}/restore`, undefined, as(KEY_A));
  const ofUnknown = await call(t.base, 'POST', `/v1/snapshots/${unknown}/restore`, undefined, as(KEY_A));
  assert.deepEqual(shape(ofForeign, foreign), shape(ofUnknown, unknown));
  assert.equal(ofForeign.status, 404);
  // The operator is told what is wrong with it.
  const operator = await call(t.base, 'POST', `/v1/snapshots/${foreign}/restore`, undefined, { ...as(OPERATOR), 'memory-namespace': 'tenant-b' });
  assert.equal(operator.body.code, 'SNAPSHOT_UNUSABLE');
});
