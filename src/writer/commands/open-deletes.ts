// Deletes in progress (forgetBegin … forgetEnd), held by this writer: rows such a delete is
// about to remove count as gone for de-duplication, extraction and promotion. A node's open
// deletes are its own: another node's writer does not see them.
import type { Hold, Step, WriteRows } from './rows.js';

export class OpenDeletes {
  private readonly open = new Map<number, Hold>();

  begin(deletionId: number, hold: Hold): void {
    this.open.set(deletionId, hold);
  }

  /** What the delete holds (undefined when its entity did not exist when it began). */
  held(deletionId: number): Hold | undefined {
    return this.open.get(deletionId);
  }

  end(deletionId: number): void {
    this.open.delete(deletionId);
  }

  /**
   * The open deletes as they are now, to put back when the transaction (or savepoint) that is
   * about to change them rolls back: a rolled-back forgetBegin must not hold rows, nor a
   * rolled-back forgetEnd release them, when the flush runs again.
   */
  save(): Map<number, Hold> {
    return new Map(this.open);
  }

  restore(saved: Map<number, Hold>): void {
    this.open.clear();
    for (const [id, hold] of saved) this.open.set(id, hold);
  }

  /** The entity's memories up to this rowid are being deleted (0: none are). */
  deletedUpTo(entityId: string): number {
    let upTo = 0;
    for (const hold of this.open.values()) if (hold.entityId === entityId) upTo = Math.max(upTo, hold.maxRowid);
    return upTo;
  }

  /** Some of these memories (by id) are held by an open delete. */
  *anySourceHeld(rows: WriteRows, ids: string[]): Step<boolean> {
    if (ids.length === 0) return false;
    for (const hold of this.open.values()) if (yield* rows.sourcesHeld(ids, hold)) return true;
    return false;
  }

  /** Some of these memories (by rowid) are held by an open delete. */
  *anyRowHeld(rows: WriteRows, rowids: number[]): Step<boolean> {
    if (rowids.length === 0) return false;
    for (const hold of this.open.values()) if (yield* rows.rowsHeld(rowids, hold)) return true;
    return false;
  }
}
