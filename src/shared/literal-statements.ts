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
 * `sql(...spelled)` prepared once per combination of values in use (bounded), where each value
 * is spelled by `spell`: the check that turns it into SQL text, or throws (integerLiteral, or a
 * closed set's member). Spelled before the look-up, so no unchecked value reaches the text.
 */
export function statementPerValues<V extends string | number, B extends unknown[] | {} = unknown[], R = unknown>(
  db: Db, spell: (value: V) => string, sql: (...spelled: string[]) => string, options: { pluck?: boolean } = {},
): (...values: V[]) => Statement<B, R> {
  const prepared = new BoundedMap<string, Statement<B, R>>(PREPARED_VALUES);
  return (...values) => {
    const spelled = values.map(spell);
    // One value (the writer's hot statements) is its own key: no joined string per run.
    return prepared.getOrCreate(spelled.length === 1 ? spelled[0]! : spelled.join(','), () => {
      return prepareOnce<B, R>(db, sql(...spelled), options.pluck ? 'pluck' : 'rows');
    });
  };
}

/** Row counts (LIMIT, OFFSET, any count the planner reads) spelled in, each a checked integer. */
export function statementPerLimits<B extends unknown[] | {} = unknown[], R = unknown>(
  db: Db, sql: (...limits: string[]) => string, options: { pluck?: boolean } = {},
): (...limits: number[]) => Statement<B, R> {
  return statementPerValues<number, B, R>(db, integerLiteral, sql, options);
}
