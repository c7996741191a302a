// `import <file|->`: loads an export into the database (offline, one transaction).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { IdConflictError } from '../../writer/sqlite/row-writer.js';
import { CliError, sqliteConfigFrom, type Command } from '../terminal/args.js';
import { openForWriting } from '../storage/offline-db.js';
import { importNamespace, ImportLineError } from '../storage/namespace-import.js';
import { progressBar, type Progress } from '../terminal/progress.js';

export const importCommand: Command = {
  name: 'import',
  summary: 'load a namespace from JSON lines written by export',
  help: `Usage: memory-runtime import <file | -> [--namespace <name>] [--quiet]

Reads an export (a file, or stdin for "-") as it streams and inserts its rows with their
ids, every column, links and vectors, into the namespace named in the file (or --namespace).
Creates the database when it does not exist. All or nothing: a damaged or truncated file
rolls back completely, with the line number. Rows already present are kept, so importing
twice changes nothing. Entities are matched by name when the namespace already has one.

The service must be stopped: only one process may write the database.

Options:
  -q, --quiet          no progress bar`,
  options: { quiet: { type: 'boolean', short: 'q' } },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals }) {
    // Only an explicit --namespace overrides the file's own namespace.
    const config = sqliteConfigFrom('import', { ...values, namespace: undefined });
    const source = positionals[0];
    const input = source === '-' ? process.stdin : createReadStream(source);
    const opened = new Promise<void>((resolve, reject) => {
      if (source === '-') resolve();
      input.once('open', () => resolve());
      input.once('error', (e: Error) => reject(new CliError(`cannot read ${source}: ${e.message}`)));
    });
    await opened;
    const target = openForWriting(config, 'import', { create: true, upgradeVectors: true });
    let progress: Progress = { tick() {}, stop() {} };
    try {
      target.db.exec('BEGIN IMMEDIATE');
      let result;
      try {
        result = await importNamespace(createInterface({ input, crlfDelay: Infinity }), target, {
          namespace: typeof values.namespace === 'string' ? values.namespace : undefined,
          onHeader: (h) => (progress = progressBar('import', h.counts.entities + h.counts.episodes + h.counts.memories, values.quiet === true)),
          onRow: () => progress.tick(),
        });
        target.db.exec('COMMIT');
      } catch (error) {
        if (target.db.inTransaction) target.db.exec('ROLLBACK');
        throw error;
      } finally {
        progress.stop();
      }
      const { created, present } = result;
      process.stdout.write(`imported into namespace '${result.namespace}': ${created.entities} entities, ${created.episodes} episodes, ` +
        `${created.memories} memories, ${result.vectors} vectors` +
        `${result.vectorsSkipped > 0 ? ` (${result.vectorsSkipped} vectors skipped: other embedder or dimension)` : ''}; ` +
        `already present: ${present.entities} entities, ${present.episodes} episodes, ${present.memories} memories\n`);
    } catch (error) {
      if (error instanceof ImportLineError || error instanceof IdConflictError) {
        throw new CliError(`import failed, nothing was changed: ${error.message}`);
      }
      if (error instanceof CliError) throw error;
      throw new CliError(`import failed, nothing was changed: ${(error as Error).message}`);
    } finally {
      input.destroy();
      target.close();
    }
  },
};
