// Applies pending schema migrations and makes sure the configured namespace exists.
import type { Db } from '../../shared/db.js';
import { factAttribute } from '../../shared/fact-attributes.js';
import { FACT_ATTRIBUTE_FUNCTION, MIGRATIONS } from '../../shared/sql-schema.js';

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this build understands (${MIGRATIONS.length})`);
  }
  if (current === MIGRATIONS.length) return;
  // Migrations 7 and 12 compute each stored fact's attribute with the writer's own rule.
  db.function(FACT_ATTRIBUTE_FUNCTION, { deterministic: true },
    (content) => (typeof content === 'string' ? factAttribute(content)?.attribute ?? null : null));
  // A table rebuild (drop, then rename a copy into place) must not fire ON DELETE actions or
  // trip references mid-way, so foreign keys are off while migrating (the pragma is a no-op
  // inside a transaction, hence out here) and checked as a whole before each commit.
  const enforced = db.pragma('foreign_keys', { simple: true }) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    for (let version = current; version < MIGRATIONS.length; version++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[version]);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0) throw new Error(`migration ${version + 1} left ${broken.length} broken references`);
        db.pragma(`user_version = ${version + 1}`);
      }).immediate();
    }
  } finally {
    if (enforced) db.pragma('foreign_keys = ON');
  }
}

export function ensureNamespace(db: Db, name: string, now = Date.now()): number {
  db.prepare('INSERT OR IGNORE INTO namespaces (name, created_at) VALUES (?, ?)').run(name, now);
  return (db.prepare('SELECT id FROM namespaces WHERE name = ?').get(name) as { id: number }).id;
}
