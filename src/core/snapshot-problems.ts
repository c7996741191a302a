// Problems a restore's full check found, remembered for the listing. A listing reads only each
// file's header and summary lines, so a framed file with a damaged memory line lists as
// restorable (problem: null) until a restore reads every line and refuses it; from then on the
// listing shows that problem too — the console stops offering Restore — for as long as the file
// is the one checked (same size, modification time, inode and change time).
import { stat } from 'node:fs/promises';
import type { SnapshotSummary } from '../shared/snapshot-files.js';
import { snapshotPath } from '../shared/snapshot-file.js';

export class SnapshotProblems {
  /** By snapshot id: the problem and the stamp of the file it was found in. */
  private readonly known = new Map<string, { problem: string; stamp: string }>();

  constructor(private readonly snapshotDir: string) {}

  async record(snapshotId: string, problem: string): Promise<void> {
    const stamp = await this.stamp(snapshotId);
    if (stamp !== null) this.known.set(snapshotId, { problem, stamp });
  }

  /** The listing, with each problem a check found in a file still as it was. */
  async addTo(summaries: SnapshotSummary[]): Promise<SnapshotSummary[]> {
    const listed = new Set(summaries.map((summary) => summary.snapshot_id));
    for (const id of this.known.keys()) if (!listed.has(id)) this.known.delete(id);
    return Promise.all(summaries.map(async (summary) => {
      const known = this.known.get(summary.snapshot_id);
      if (!known || summary.problem !== null) return summary;
      if ((await this.stamp(summary.snapshot_id)) !== known.stamp) {
        this.known.delete(summary.snapshot_id);
        return summary;
      }
      return { ...summary, problem: known.problem };
    }));
  }

  private async stamp(snapshotId: string): Promise<string | null> {
    try {
      const { size, mtimeMs, ino, ctimeMs } = await stat(snapshotPath(this.snapshotDir, snapshotId));
      return `${size}\u0000${mtimeMs}\u0000${ino}\u0000${ctimeMs}`;
    } catch {
      return null;
    }
  }
}
