// Applies pending schema migrations and makes sure the configured namespace exists.
import type { Db } from '../shared/db.js';
import { MIGRATIONS } from '../shared/sql-schema.js';

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this build understands (${MIGRATIONS.length})`);
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}

export function ensureNamespace(db: Db, name: string, now = Date.now()): number {
  db.prepare('INSERT OR IGNORE INTO namespaces (name, created_at) VALUES (?, ?)').run(name, now);
  return (db.prepare('SELECT id FROM namespaces WHERE name = ?').get(name) as { id: number }).id;
}
