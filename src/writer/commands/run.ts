// Running a rule (a generator of storage steps, ../rows.ts) on each kind of adapter.
import type { Step } from './rows.js';

/**
 * SQLite: the adapter's steps return without suspending, so the whole rule runs in this call,
 * inside the flush's synchronous transaction. A rule that suspends is a bug, not a slow path.
 */
export function runNow<T>(rule: Step<T>): T {
  const step = rule.next();
  if (!step.done) throw new Error('a synchronous write rule suspended (a row operation yielded)');
  return step.value;
}

/** PostgreSQL: each step yields its query; its rows (or its error) go back into the rule. */
export async function runAwaiting<T>(rule: Step<T>): Promise<T> {
  let step = rule.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = await step.value;
    } catch (error) {
      step = rule.throw(error);
      continue;
    }
    step = rule.next(value);
  }
  return step.value;
}
