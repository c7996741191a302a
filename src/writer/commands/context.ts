// What every write rule runs against: the row port of the flush's transaction, and the writer's
// own state that outlives a command (the namespace, the clock, the deletes in progress).
import type { WriteRows } from './rows.js';
import type { OpenDeletes } from './open-deletes.js';

export interface RuleContext {
  rows: WriteRows;
  namespaceId: number;
  now: () => number;
  /** An episode with no message for this long takes no more (config.episodeTtlMs). */
  episodeTtlMs: number;
  deletes: OpenDeletes;
}
