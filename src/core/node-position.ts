// What a recall on this node must see (PostgreSQL with replicas, read-your-writes): everything
// this node's writer committed. Batches report in commit order, each with the WAL position at or
// past its commit — or with none, when the position could not be read after COMMIT (the
// connection dropped, e.g. in a failover). Keeping the previous position then would let a
// replica that has not replayed that batch serve the next recall and miss its writes: so until a
// later batch brings a position again (which, being later in the WAL, covers it), recalls read
// the primary.
import { READ_PRIMARY } from '../shared/wal-position.js';

export class NodePosition {
  /** undefined: nothing committed yet (or SQLite); null: the last commit's position is unknown. */
  private last: string | null | undefined;

  /**
   * One batch's report: its position, null when it committed without one, undefined when there
   * is nothing to note (SQLite, or a flush that committed nothing).
   */
  committed(position: string | null | undefined): void {
    if (position !== undefined) this.last = position;
  }

  /** What a recall task carries as `after`: a pg_lsn, READ_PRIMARY, or nothing to wait for. */
  get readAfter(): string | undefined {
    return this.last === null ? READ_PRIMARY : this.last;
  }
}
