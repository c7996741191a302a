// An entity is "few" by how many memories it links, not by how many links it has: a turn where
// someone both speaks and is named links them twice (participant and mention), and must still
// count once, or a small entity would lose its candidates to a double count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { ensureNamespace, migrate } from '../src/writer/sqlite/migrate.js';
import { EntityLinks } from '../src/workers/sqlite/entity-links.js';
import { memoryInserter } from './support/rows.js';
import { tempDir } from './support/service.js';

const DEPTH = 10;

test('an entity with at most depth memories brings them all, however many links each has', () => {
  const db = openDatabase(join(tempDir('memrt-prior-'), 'p.db'), { readonly: false, synchronous: 'NORMAL' });
  migrate(db);
  const ns = ensureNamespace(db, 'default');
  db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-zoltan', ?, 'Zoltan', 'user', 0)").run(ns);
  db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES ('e-busy', ?, 'Busy', 'user', 0)").run(ns);
  const insert = memoryInserter(db, ns);
  const link = db.prepare('INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)');
  const zoltans: number[] = [];
  // 7 memories, each linked twice: 14 links > depth, 7 memories ≤ depth.
  for (let i = 0; i < 7; i++) {
    const rowid = insert({ id: `z${i}`, content: `turn ${i}` });
    link.run(rowid, 'e-zoltan', 'participant');
    link.run(rowid, 'e-zoltan', 'mention');
    zoltans.push(rowid);
  }
  // 11 memories, one link each: more than depth, so none are brought in.
  for (let i = 0; i < DEPTH + 1; i++) link.run(insert({ id: `b${i}`, content: `busy ${i}` }), 'e-busy', 'participant');

  const links = new EntityLinks(db, ns);
  const filter = { entityId: null, types: null };
  assert.deepEqual(links.membersOfFew(['e-zoltan'], DEPTH, filter).sort((a, b) => a - b), zoltans);
  assert.deepEqual(links.membersOfFew(['e-busy'], DEPTH, filter), []);
  db.close();
});
