// Finds the entities a text names: every run of 1–4 words (split on spaces, and on
// non-letters) is looked up by case-insensitive name. Used for the entity prior (entities in
// a query) and to link stored memories to the entities they mention.
import type { Db } from '../../shared/db.js';

const MAX_WORDS = 4;
const MAX_GRAMS = 400;

/** SQLite's lower() folds only ASCII; fold the same way so the index on lower(name) matches. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

export function nameCandidates(text: string): string[] {
  const grams = new Set<string>();
  const trimmed = text.trim();
  if (trimmed.length > 0 && trimmed.length <= 512) grams.add(asciiLower(trimmed));
  const splits = [
    trimmed.split(/\s+/).map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')),
    trimmed.match(/[\p{L}\p{N}]+/gu) ?? [],
  ];
  for (const words of splits) {
    for (let i = 0; i < words.length && grams.size < MAX_GRAMS; i++) {
      for (let n = 1; n <= MAX_WORDS && i + n <= words.length; n++) {
        const gram = words.slice(i, i + n).join(' ');
        if (gram.length > 0) grams.add(asciiLower(gram));
      }
    }
  }
  return [...grams];
}

export class EntityMatcher {
  private readonly stmt;

  constructor(db: Db, private readonly namespaceId: number) {
    this.stmt = db.prepare<[number, string], { id: string }>(
      'SELECT id FROM entities WHERE namespace_id = ? AND lower(name) IN (SELECT value FROM json_each(?))');
  }

  /** Ids of entities named in the text. */
  find(text: string): string[] {
    const grams = nameCandidates(text);
    if (grams.length === 0) return [];
    return this.stmt.all(this.namespaceId, JSON.stringify(grams)).map((row) => row.id);
  }
}
