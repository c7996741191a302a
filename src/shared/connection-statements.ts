// Statements prepared once per connection and shared by every namespace read or written over
// it. Per-namespace objects (a pool thread's read ports, the writer's row ports) bind the
// namespace id as a parameter, so their statements do not depend on it: preparing them per
// namespace cost 2.5–6 ms and ~0.3 MB of native memory per namespace each time a port was made,
// and with 1,000 tenants ports are made all the time (the per-thread LRU keeps 32). The native
// memory of a dropped port's statements is freed only when V8 collects their handles, which it
// does late: it does not see that memory. Shared, 1,000 tenants cost one set of statements.
import type { Statement } from 'better-sqlite3';
import { BoundedMap } from './bounded-map.js';
import type { Db } from './db.js';

const shared = new WeakMap<Db, Map<unknown, unknown>>();

/**
 * What `make` prepares on `db`, made once per connection and `owner` (a class or module key:
 * one set per kind of reader). `make` must depend on the connection only, never on a namespace.
 */
export function onConnection<T>(db: Db, owner: unknown, make: () => T): T {
  let made = shared.get(db);
  if (made === undefined) shared.set(db, made = new Map());
  if (!made.has(owner)) made.set(owner, make());
  return made.get(owner) as T;
}

/** Distinct statements `prepareOnce` keeps per connection (least recently used dropped past it). */
const PREPARED_PER_CONNECTION = 512;

type Mode = 'rows' | 'pluck' | 'raw';

/**
 * `sql` prepared once per connection (and mode: pluck and raw change what a statement returns,
 * so each mode is its own statement), shared by every caller asking for the same text. Bounded:
 * texts with values spelled in (shared/literal-statements.ts) come and go with requests.
 */
export function prepareOnce<B extends unknown[] | {} = unknown[], R = unknown>(db: Db, sql: string, mode: Mode = 'rows'): Statement<B, R> {
  const statements = onConnection(db, prepareOnce, () => new BoundedMap<string, Statement>(PREPARED_PER_CONNECTION));
  const key = `${mode}\u0000${sql}`;
  let statement = statements.get(key);
  if (statement === undefined) {
    statement = db.prepare(sql);
    if (mode === 'pluck') statement.pluck();
    else if (mode === 'raw') statement.raw();
    statements.set(key, statement);
  }
  return statement as unknown as Statement<B, R>;
}
