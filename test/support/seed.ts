// A large entity written straight into a fresh database file (much faster than the API), for
// tests of deletes and restores that must run as many writer commands.
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../src/shared/db.js';
import { embedAll, prepareVectorDatabase } from './cli.js';
import { memoryInserter } from './rows.js';

/**
 * An entity owning `count` facts "<name> fact <i>" (with vectors unless `vectors` is false); with
 * `participant`, a second entity of that name takes part in each of them.
 */
export function seedEntity(path: string, name: string, count: number, { vectors = true, participant = '' } = {}): void {
  prepareVectorDatabase(path);
  const db = openDatabase(path, { readonly: false });
  const entityId = randomUUID();
  const participantId = randomUUID();
  const entity = db.prepare("INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, 1, ?, 'user', 0)");
  entity.run(entityId, name);
  if (participant) entity.run(participantId, participant);
  const insert = memoryInserter(db, 1);
  const link = db.prepare('INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const rowid = insert({ id: randomUUID(), content: `${name} fact ${i}`, entityId });
      link.run(rowid, entityId, 'owner');
      if (participant) link.run(rowid, participantId, 'participant');
    }
  })();
  db.close();
  if (vectors) embedAll(path);
}
