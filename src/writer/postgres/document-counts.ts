// namespace_text_stats.documents (BM25's N, read by workers/postgres/lexical.ts) kept by the
// writer: each command's rows report how many memories it inserted and deleted, the flush adds
// a command's change once the command has succeeded (a command undone by its savepoint adds
// nothing), and writes the sum once per namespace just before COMMIT — so a flush that rolls back
// counts nothing. The flush sets COUNTED_BY_WRITER first, so the table's statement triggers
// (migration 10), which count every other session's rows, skip this transaction's.
import { COUNTED_BY_WRITER } from '../../shared/postgres-schema.js';
import type { Tx } from './connect.js';

/** The start of a flush's first statement: the triggers leave this transaction's rows to the writer. */
export const countedByWriter = (tx: Tx) => tx`set_config(${COUNTED_BY_WRITER}, 'writer', true)`;

export class DocumentCounts {
  /** Rows added (or removed, negative) by namespace id, by the flush's succeeded commands. */
  private readonly change = new Map<number, number>();

  add(namespaceId: number, rows: number): void {
    if (rows !== 0) this.change.set(namespaceId, (this.change.get(namespaceId) ?? 0) + rows);
  }

  /**
   * One statement for every namespace whose count moved, in ascending id order (two nodes'
   * flushes over the same namespaces lock their rows in one order). Nothing when none moved.
   */
  async write(tx: Tx): Promise<void> {
    const moved = [...this.change].filter(([, rows]) => rows !== 0).sort(([a], [b]) => a - b);
    if (moved.length === 0) return;
    await tx`INSERT INTO namespace_text_stats (namespace_id, documents)
      SELECT * FROM unnest(${moved.map(([id]) => id)}::int[], ${moved.map(([, rows]) => rows)}::bigint[])
      ON CONFLICT (namespace_id) DO UPDATE SET documents = namespace_text_stats.documents + excluded.documents`;
  }
}
