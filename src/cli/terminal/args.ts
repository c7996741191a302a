// Command-line plumbing shared by every command: node:util parseArgs in strict mode, the
// options all commands take (--db, --namespace, --help), configuration from the same
// environment the service reads, and errors that end the process with one line.
import { parseArgs } from 'node:util';
import { ConfigError, databaseLabel, loadConfig, type Config } from '../../shared/config.js';

/** Ends the command with `memory-runtime: <message>` on stderr and a non-zero exit code. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad invocation (unknown option, missing argument): exit code 2, like most Unix tools. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(`${message} (see --help)`, 2);
  }
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string };

export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The usage line and the rest of `--help`. */
  help: string;
  options: Record<string, OptionSpec>;
  positionals: { min: number; max: number };
  run(args: ParsedArgs): Promise<void>;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  db: { type: 'string' },
  namespace: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export const COMMON_HELP = `Common options:
  --db <path>          database file (default: SERVICE_PATH, as the service resolves it)
  --namespace <name>   namespace (default: SERVICE_NAMESPACE, else "default")
  -h, --help           show this help`;

/** Parses argv for a command; `null` means help was asked for (and printed). */
export function parseCommand(command: Command, argv: string[]): ParsedArgs | null {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...command.options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${command.name}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed.values.help) {
    process.stdout.write(`${command.help}\n\n${COMMON_HELP}\n`);
    return null;
  }
  const { min, max } = command.positionals;
  if (parsed.positionals.length < min) throw new UsageError(`${command.name}: missing argument`);
  if (parsed.positionals.length > max) throw new UsageError(`${command.name}: unexpected argument '${parsed.positionals[max]}'`);
  return parsed as ParsedArgs;
}

/** The service's configuration, with --db and --namespace taking the place of their variables. */
export function configFrom(values: ParsedArgs['values'], env: NodeJS.ProcessEnv = process.env): Config {
  const overrides: Record<string, string> = {};
  if (typeof values.db === 'string') overrides.SERVICE_PATH = values.db;
  if (typeof values.namespace === 'string') overrides.SERVICE_NAMESPACE = values.namespace;
  try {
    return loadConfig({ ...env, ...overrides });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`invalid configuration: ${error.message}`);
    throw error;
  }
}

/**
 * The configuration of a command that opens the SQLite file (export, import, reembed, offline
 * restore): refused when SERVICE_DATABASE_URL is set, because the service then keeps its
 * memories in PostgreSQL and the file at SERVICE_PATH is not its data — acting on it would
 * silently do nothing the service sees.
 */
export function sqliteConfigFrom(command: string, values: ParsedArgs['values'], env: NodeJS.ProcessEnv = process.env): Config {
  const config = configFrom(values, env);
  if (config.postgres) {
    throw new CliError(`${command} works on the SQLite file ${config.dbPath}, but SERVICE_DATABASE_URL is set: ` +
      `the service keeps its memories in PostgreSQL (${databaseLabel(config)}), not in that file. ` +
      `Unset SERVICE_DATABASE_URL to ${command} a SQLite file`);
  }
  return config;
}
