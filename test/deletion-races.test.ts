// Writes that land between a delete's snapshot and the writer command deleting the rows it
// touched. A write acknowledged to a client must not be deleted by a delete whose snapshot was
// read before it, and data derived from rows being deleted (extraction from the entity's
// turns) must not outlive the delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { contentKey } from '../src/shared/text.js';
import { embedAll, prepareVectorDatabase, VECTOR_ENV } from './support/cli.js';
import { del, get, post, startTestService, tempDir } from './support/service.js';

const TOTAL = 20_000;

/** An entity owning `count` facts "<name> fact <i>", stored as the writer stores them. */
function seedEntity(path: string, name: string, count: number): void {
  prepareVectorDatabase(path);
  const db = openDatabase(path, { readonly: false });
  const entityId = randomUUID();
  db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, 1, ?, 'user', 0)").run(entityId, name);
  const insert = db.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence,
    stability, difficulty, last_access_at, created_at, extraction_tier, entity_id)
    VALUES (?, 1, 'semantic', ?, ?, 0.5, 1, 5, 0, 0, 1, ?)`);
  const link = db.prepare("INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, 'owner')");
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const content = `${name} fact ${i}`;
      link.run(insert.run(randomUUID(), content, contentKey(content), entityId).lastInsertRowid, entityId);
    }
  })();
  db.close();
  embedAll(path);
}

/** Resolves once the delete's first writer command has removed rows (its snapshot is fsynced). */
async function deletingStarted(base: string, total: number): Promise<void> {
  while ((await get(base, '/v1/stats')).body.semantic_memories >= total) await new Promise((r) => setTimeout(r, 5));
}

test('a fact repeated while its entity is being deleted (after the snapshot) is acknowledged and kept', async () => {
  const dir = tempDir('memrt-race-dup-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'busy', TOTAL);
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    let finished = false;
    const deletion = del(t.base, '/v1/entities/busy').finally(() => (finished = true));
    await deletingStarted(t.base, TOTAL);
    // The last row of the entity: still present, deleted by one of the last commands.
    const late = await post(t.base, '/v1/remember', { entity: 'busy', fact: `busy fact ${TOTAL - 1}`, confidence: 0.9 });
    assert.equal(late.status, 201);
    assert.equal(finished, false, 'the repeated fact was acknowledged while the delete ran');
    assert.equal((await deletion).status, 200);
    const left = (await post(t.base, '/v1/inspect', { entity: 'busy' })).body.semantic as { id: string }[];
    // Acknowledged after the snapshot was read: README guarantee (c) says it is kept.
    assert.deepEqual(left.map((m) => m.id), [late.body.id], 'the acknowledged repeated fact was deleted');
  } finally {
    await t.close();
  }
});

test('an episode ended while its participant is being deleted stores nothing from the deleted turns', async () => {
  const dir = tempDir('memrt-race-end-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'talker', TOTAL);
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    const { episode_id } = (await post(t.base, '/v1/episodes/start', { participants: ['talker'] })).body;
    assert.equal((await post(t.base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: 'I love pizza' })).status, 200);
    const deletion = del(t.base, '/v1/entities/talker');
    await deletingStarted(t.base, TOTAL);
    // The turn (the entity's newest row) is in the snapshot and about to be deleted.
    const end = await post(t.base, `/v1/episodes/${episode_id}/end`, {});
    assert.equal(end.status, 200);
    const r = await deletion;
    assert.equal(r.status, 200);
    assert.equal(r.body.snapshot.episodic_count, 1, 'the turn was in the snapshot and deleted');
    // A fact stored from the deleted turn would keep the entity (and show here); none was, so it went too.
    const left = await post(t.base, '/v1/inspect', { entity: 'talker' });
    assert.equal(left.status, 404, `a fact extracted from a deleted turn outlived the delete: ${JSON.stringify(left.body)}`);
  } finally {
    await t.close();
  }
});

test('a consolidation run while the entity is being deleted promotes nothing from the deleted turns', async () => {
  const dir = tempDir('memrt-race-promote-');
  const db = join(dir, 'memory.db');
  seedEntity(db, 'repeater', TOTAL);
  const t = await startTestService({ SERVICE_PATH: db, ...VECTOR_ENV });
  try {
    const { episode_id } = (await post(t.base, '/v1/episodes/start', { participants: ['repeater'] })).body;
    // Two identical turns: a cluster consolidation promotes into a semantic memory of 'repeater'.
    for (let i = 0; i < 2; i++) {
      assert.equal((await post(t.base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: 'I drink green tea every morning' })).status, 200);
    }
    let finished = false;
    const deletion = del(t.base, '/v1/entities/repeater').finally(() => (finished = true));
    await deletingStarted(t.base, TOTAL);
    // The turns are the entity's newest rows: in the snapshot, deleted by one of the last commands.
    const run = await post(t.base, '/v1/consolidate', {});
    assert.equal(run.status, 200);
    assert.equal(finished, false, 'the consolidation ran while the delete was in progress');
    const r = await deletion;
    assert.equal(r.status, 200);
    assert.equal(r.body.snapshot.episodic_count, 2, 'the turns were in the snapshot and deleted');
    // A memory promoted from the deleted turns would keep the entity (and show here); none was, so it went too.
    const left = await post(t.base, '/v1/inspect', { entity: 'repeater' });
    assert.equal(left.status, 404, `a memory promoted from deleted turns outlived the delete: ${JSON.stringify(left.body)}`);
    assert.equal(run.body.promoted, 0);
  } finally {
    await t.close();
  }
});
