// `snapshots`: the deletion snapshots beside the database, oldest first.
import { configFrom, type Command } from '../terminal/args.js';
import { listSnapshots } from '../storage/snapshot-files.js';
import { listStoredSnapshots } from '../storage/stored-snapshots.js';
import { databaseLabel } from '../../shared/config.js';

export const snapshotsCommand: Command = {
  name: 'snapshots',
  summary: 'list deletion snapshots with their counts and dates',
  help: `Usage: memory-runtime snapshots [--json]

Lists the deletion snapshots in snapshots/ beside the database, oldest first: id, capture
time (UTC), namespace, entity, and memory counts by type. A damaged file is listed with its
problem instead of counts. Reads files only; safe while the service runs. With
SERVICE_DATABASE_URL set, lists the snapshots in PostgreSQL's tables instead (where a
service on PostgreSQL keeps them).

Options:
  --json     one JSON object per snapshot and line`,
  options: { json: { type: 'boolean' } },
  positionals: { min: 0, max: 0 },
  async run({ values }) {
    const config = configFrom(values);
    const snapshots = config.postgres ? await listStoredSnapshots({ ...config, postgres: config.postgres }) : listSnapshots(config.snapshotDir);
    if (values.json) {
      for (const s of snapshots) process.stdout.write(`${JSON.stringify(s)}\n`);
      return;
    }
    if (snapshots.length === 0) {
      process.stdout.write(`no snapshots in ${config.postgres ? databaseLabel(config) : config.snapshotDir}\n`);
      return;
    }
    const rows = snapshots.map((s) => s.problem === null
      ? [s.snapshot_id, s.captured_at ?? '', s.namespace ?? '', s.entity ?? '', String(s.memory_count),
        `${s.counts.episodic}/${s.counts.semantic}/${s.counts.procedural}`, String(s.vectors)]
      : [s.snapshot_id, '-', '-', '-', '-', '-', `DAMAGED: ${s.problem}`]);
    const header = ['SNAPSHOT_ID', 'CAPTURED_AT', 'NAMESPACE', 'ENTITY', 'MEMORIES', 'EPI/SEM/PROC', 'VECTORS'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    for (const row of [header, ...rows]) {
      process.stdout.write(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')}\n`);
    }
  },
};
