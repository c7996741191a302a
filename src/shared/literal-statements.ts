// Statements with a value spelled into their SQL, one prepared statement per value in use.
//
// SQLite prepares a statement again before a run whenever a value bound to it can change the
// plan it chose: a LIMIT parameter (the planner uses the number since SQLite 3.47), or a
// parameter compared with a constant in a partial index's WHERE (`memory_type = ?` against
// memories_promotable's `memory_type = 'episodic'`). Over this schema, with its triggers and
// indexes, preparing costs more than running: measured 11 µs for a timeline read that runs in
// 2 µs, 5 µs on a duplicate check. Such values go into the SQL text instead; they come from
// small sets (a page size, a request's limit, three memory types), so few statements exist.
import type { Statement } from 'better-sqlite3';
import { BoundedMap } from './bounded-map.js';
import type { Db } from './db.js';
import { prepareOnce } from './connection-statements.js';

/**
 * Distinct values kept prepared per statement: more are re-prepared on use (least recently used
 * goes). Recall's depth is max(50, 4 × limit), so a handful of values cover nearly every request.
 */
const PREPARED_VALUES = 8;

/** A non-negative integer as SQL text; anything else would be an injection or a bug. */
export function integerLiteral(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a row count: ${value}`);
  return String(value);
}

/**
 * `sql(spelled)` prepared once per value (bounded), where `spelled = spell(value)`: the check
 * that turns the value into SQL text, or throws (integerLiteral, or a closed set's member).
 */
export function statementPerValue<V extends string | number, B extends unknown[] | {} = unknown[], R = unknown>(
  db: Db, spell: (value: V) => string, sql: (spelled: string) => string,
): (value: V) => Statement<B, R> {
  const prepared = new BoundedMap<V, Statement<B, R>>(PREPARED_VALUES);
  return (value) => prepared.getOrCreate(value, () => prepareOnce<B, R>(db, sql(spell(value))));
}

/**
 * A statement whose row counts (LIMIT, and any count the planner reads) are spelled in: `sql`
 * receives them as checked SQL text, one prepared statement per combination in use (bounded).
 */
export function statementPerLimits<B extends unknown[] | {} = unknown[], R = unknown>(
  db: Db, sql: (...limits: string[]) => string, options: { pluck?: boolean } = {},
): (...limits: number[]) => Statement<B, R> {
  const prepared = new BoundedMap<string, Statement<B, R>>(PREPARED_VALUES);
  return (...limits) => {
    const spelled = limits.map(integerLiteral);
    return prepared.getOrCreate(spelled.join(','), () => prepareOnce<B, R>(db, sql(...spelled), options.pluck ? 'pluck' : 'rows'));
  };
}
