// `keys`: the keys file (SERVICE_API_KEYS_FILE) without editing it by hand. `add` mints a random
// key, prints it once (it is not stored anywhere: only its SHA-256 digest is appended); `list`
// shows digests' prefixes, namespaces and rates; `revoke` removes the key(s) whose digest starts
// with a prefix. Changes replace the file by rename, so a running service never reads half a file
// (it notices the change within a second, http/keys-file.ts), and take turns on a lock beside
// the file (storage/keys-file-lock.ts), so concurrent changes never undo each other.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { CliError, UsageError, type Command } from '../terminal/args.js';
import { keyDigest, keysFileLine, parseKeysFile, type FileKey } from '../../shared/api-keys-file.js';
import { namespaceNameProblem } from '../../shared/namespace-name.js';
import { withKeysFileLock } from '../storage/keys-file-lock.js';

/** Digest characters `list` shows, and the shortest prefix `revoke` takes. */
const PREFIX = 12;
const MIN_PREFIX = 8;

export const keysCommand: Command = {
  name: 'keys',
  summary: 'add, list or revoke API keys in SERVICE_API_KEYS_FILE',
  help: `Usage: memory-runtime keys add --namespace <name> [--rate <per minute>] [--file <path>]
       memory-runtime keys list [--file <path>]
       memory-runtime keys revoke <digest prefix> [--file <path>]

add      mints a random key bound to --namespace (or "*" for an operator key, which may name
         any namespace with the Memory-Namespace header), prints it ONCE on stdout and appends
         its SHA-256 digest to the file (created when missing, mode 0600).
list     one line per key: digest prefix, namespace, rate (requests per minute, "-" = SERVICE_RATE_LIMIT).
revoke   removes every key whose digest starts with the prefix (at least ${MIN_PREFIX} characters).
A running service re-reads the file within a second of the change (and on SIGHUP).

Options:
  --file <path>   the keys file (default: SERVICE_API_KEYS_FILE)
  --rate <n>      the key's own rate limit, requests per minute`,
  options: { file: { type: 'string' }, rate: { type: 'string' } },
  positionals: { min: 1, max: 2 },
  async run({ values, positionals }) {
    const path = typeof values.file === 'string' ? values.file : process.env.SERVICE_API_KEYS_FILE;
    if (!path) throw new UsageError('keys: no file: pass --file or set SERVICE_API_KEYS_FILE');
    const [action, argument] = positionals as [string, string?];
    if (action === 'add') return add(path, values.namespace, values.rate);
    if (action === 'list') return list(path);
    if (action === 'revoke') {
      if (!argument) throw new UsageError('keys revoke: missing the digest prefix');
      return revoke(path, argument);
    }
    throw new UsageError(`keys: unknown action '${action}' (add, list or revoke)`);
  },
};

function read(path: string): { text: string; keys: FileKey[] } {
  if (!existsSync(path)) return { text: '', keys: [] };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return { text, keys: parseKeysFile(text).keys };
}

/** Replaces the file whole (a reader sees the old file or the new one). */
function replace(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}

function add(path: string, namespace: unknown, rate: unknown): void {
  if (typeof namespace !== 'string') throw new UsageError('keys add: --namespace is required ("*" for an operator key)');
  if (namespace !== '*') {
    const problem = namespaceNameProblem(namespace);
    if (problem) throw new UsageError(`keys add: --namespace ${problem}`);
    // The file's fields are separated by whitespace: "acme 60" would be read back as namespace
    // "acme" with a rate of 60, a key for another tenant.
    if (/\s/.test(namespace)) throw new UsageError('keys add: --namespace cannot be written to the keys file: it holds whitespace');
  }
  let perMinute: number | null = null;
  if (rate !== undefined) {
    perMinute = Number(rate);
    if (!/^\d{1,9}$/.test(String(rate)) || perMinute <= 0) throw new UsageError('keys add: --rate must be a whole number of requests per minute above 0');
  }
  const key = `mrk_${randomBytes(24).toString('base64url')}`;
  const line = keysFileLine({ digest: keyDigest(key), namespace: namespace === '*' ? null : namespace, perMinute });
  withKeysFileLock(path, () => {
    const { text } = read(path);
    replace(path, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`);
  });
  process.stdout.write(`${key}\n`);
  process.stderr.write(`added key ${keyDigest(key).slice(0, PREFIX)} for namespace ${namespace}; the key is shown only this once\n`);
}

function list(path: string): void {
  for (const key of read(path).keys) {
    process.stdout.write(`${key.digest.slice(0, PREFIX)}  ${key.namespace ?? '*'}  ${key.perMinute ?? '-'}\n`);
  }
}

function revoke(path: string, prefix: string): void {
  if (!/^[0-9a-f]+$/.test(prefix) || prefix.length < MIN_PREFIX) throw new UsageError(`keys revoke: the prefix must be at least ${MIN_PREFIX} lower-case hex digits`);
  const removed = withKeysFileLock(path, () => {
    const { text } = read(path);
    let dropped = 0;
    const kept = text.split('\n').filter((line) => {
      const digest = line.trim().split(/\s+/)[0] ?? '';
      const drop = !line.trim().startsWith('#') && digest.startsWith(prefix);
      if (drop) dropped++;
      return !drop;
    });
    if (dropped === 0) throw new CliError(`no key's digest starts with ${prefix}`);
    replace(path, kept.join('\n'));
    return dropped;
  });
  process.stderr.write(`revoked ${removed} key(s)\n`);
}
