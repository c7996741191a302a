// `export`: a namespace to JSON lines (stdout or --output), streamed with backpressure.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { CliError, sqliteConfigFrom, type Command } from '../terminal/args.js';
import { namespaceIdOf, openForReading } from '../storage/offline-db.js';
import { exportHeader, exportRows } from '../storage/namespace-export.js';
import { progressBar } from '../terminal/progress.js';

/** Lines are written in chunks of about this size: fewer syscalls, bounded memory. */
const CHUNK_BYTES = 64 * 1024;

export const exportCommand: Command = {
  name: 'export',
  summary: 'write a namespace to JSON lines',
  help: `Usage: memory-runtime export [--output <file>] [--quiet]

Writes every entity, episode and memory of the namespace (all columns, links and vectors) as
JSON lines: a header first, then one row per line. Reads one consistent view of the
database, so it is safe while the service runs. Progress goes to stderr on a terminal.

Options:
  -o, --output <file>  write here instead of stdout (created with mode 0600)
  -q, --quiet          no progress bar`,
  options: { output: { type: 'string', short: 'o' }, quiet: { type: 'boolean', short: 'q' } },
  positionals: { min: 0, max: 0 },
  async run({ values }) {
    const config = sqliteConfigFrom('export', values);
    const db = openForReading(config);
    const toFile = typeof values.output === 'string' && values.output !== '-';
    const out: Writable = toFile ? createWriteStream(values.output as string, { mode: 0o600 }) : process.stdout;
    const failed = new Promise<never>((_, reject) => out.once('error', (e) => reject(new CliError(`cannot write the export: ${e.message}`))));
    failed.catch(() => {});
    try {
      const ns = namespaceIdOf(db, config.namespace);
      // One read transaction: a single point-in-time view even while the service writes.
      db.exec('BEGIN');
      const header = exportHeader(db, { id: ns.id, name: config.namespace, created_at: ns.created_at });
      const total = header.counts.entities + header.counts.episodes + header.counts.memories;
      const progress = progressBar('export', total, values.quiet === true);
      let chunk = `${JSON.stringify(header)}\n`;
      const flush = async () => {
        const ok = out.write(chunk);
        chunk = '';
        if (!ok) await Promise.race([once(out, 'drain'), failed]);
      };
      try {
        for (const line of exportRows(db, ns.id)) {
          chunk += `${line}\n`;
          progress.tick();
          if (chunk.length >= CHUNK_BYTES) await flush();
        }
        await flush();
      } finally {
        progress.stop();
        db.exec('COMMIT');
      }
      if (toFile) {
        out.end();
        await Promise.race([once(out, 'finish'), failed]);
      }
      process.stderr.write(`exported namespace '${config.namespace}': ${header.counts.entities} entities, ` +
        `${header.counts.episodes} episodes, ${header.counts.memories} memories\n`);
    } finally {
      db.close();
    }
  },
};
