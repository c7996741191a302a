#!/usr/bin/env node
// The operator CLI (`memory-runtime <command>`, the package's bin). Each command lives in
// commands/; this file only picks one, and turns every failure into one line on stderr and
// a non-zero exit code.
import { CliError, parseCommand, UsageError, type Command } from './terminal/args.js';
import { exportCommand } from './commands/export.js';
import { importCommand } from './commands/import.js';
import { keysCommand } from './commands/keys.js';
import { migrateCommand } from './commands/migrate.js';
import { reembedCommand } from './commands/reembed.js';
import { restoreCommand } from './commands/restore.js';
import { serveCommand } from './commands/serve.js';
import { snapshotsCommand } from './commands/snapshots.js';

const COMMANDS: Command[] = [serveCommand, restoreCommand, snapshotsCommand, exportCommand, importCommand, reembedCommand, migrateCommand, keysCommand];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: memory-runtime <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run "memory-runtime <command> --help" for a command's options.`;
}

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    if (name === undefined) process.exitCode = 2;
    return;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command '${name}'`);
  const args = parseCommand(command, rest);
  if (args) await command.run(args);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof CliError ? error.message : `unexpected failure: ${(error as Error)?.message ?? String(error)}`;
  // One line, whatever the message held.
  process.stderr.write(`memory-runtime: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exitCode = error instanceof CliError ? error.exitCode : 1;
});
