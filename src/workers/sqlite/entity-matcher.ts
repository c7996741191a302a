// Finds the entities a text names in the SQLite file: its name candidates
// (port/entity-mentions.ts) looked up by the index on lower(name).
import type { Db } from '../../shared/db.js';
import { prepareOnce } from '../../shared/connection-statements.js';
import { nameCandidates } from '../port/entity-mentions.js';

export class EntityMatcher {
  private readonly stmt;

  constructor(db: Db, private readonly namespaceId: number) {
    this.stmt = prepareOnce<[number, string], { id: string }>(db,
      'SELECT id FROM entities WHERE namespace_id = ? AND lower(name) IN (SELECT value FROM json_each(?))');
  }

  /** Ids of entities named in the text. */
  find(text: string): string[] {
    const grams = nameCandidates(text);
    if (grams.length === 0) return [];
    return this.stmt.all(this.namespaceId, JSON.stringify(grams)).map((row) => row.id);
  }
}
