// SERVICE_API_KEYS_FILE: one key per line, as `<sha256 hex of the key> <namespace> [<requests per
// minute>]`; `*` for the namespace makes an operator key (any namespace, by header). Blank lines and
// `#` comments are skipped. Only digests are on disk, so the file can be copied to every node of a
// fleet (and into backups) without handing out keys. Read by the service (http/keys-file.ts) and
// written by `memory-runtime keys` (cli/commands/keys.ts).
import { createHash } from 'node:crypto';
import { namespaceNameProblem } from './namespace-name.js';

/** A key's SHA-256, hex: what the file holds and what the service looks a presented key up by. */
export const keyDigest = (value: string): string => createHash('sha256').update(value).digest('hex');

export interface FileKey {
  /** SHA-256 of the key, 64 lower-case hex digits. */
  digest: string;
  /** null: an operator key (`*`). */
  namespace: string | null;
  /** Requests per minute of this key; null: SERVICE_RATE_LIMIT. */
  perMinute: number | null;
}

export interface KeysFileProblem {
  line: number;
  reason: string;
}

const DIGEST = /^[0-9a-f]{64}$/;
export const OPERATOR_MARK = '*';

/** Every well-formed line's key (a later line with the same digest wins), and what is wrong with the others. */
export function parseKeysFile(text: string): { keys: FileKey[]; problems: KeysFileProblem[] } {
  const keys = new Map<string, FileKey>();
  const problems: KeysFileProblem[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    const problem = fieldsProblem(fields);
    if (problem) {
      problems.push({ line: index + 1, reason: problem });
      continue;
    }
    const [digest, namespace, rate] = fields as [string, string, string?];
    keys.set(digest, { digest, namespace: namespace === OPERATOR_MARK ? null : namespace, perMinute: rate === undefined ? null : Number(rate) });
  }
  return { keys: [...keys.values()], problems };
}

function fieldsProblem(fields: string[]): string | null {
  if (fields.length < 2 || fields.length > 3) return `expected "<sha256 hex> <namespace> [<requests per minute>]", got ${fields.length} field(s)`;
  const [digest, namespace, rate] = fields;
  if (!DIGEST.test(digest!)) return 'the first field is not a SHA-256 digest (64 lower-case hex digits)';
  if (namespace !== OPERATOR_MARK) {
    const problem = namespaceNameProblem(namespace!);
    if (problem) return `the namespace ${problem}`;
  }
  if (rate !== undefined && !(/^\d{1,9}$/.test(rate) && Number(rate) > 0)) return 'the rate is not a whole number of requests per minute above 0';
  return null;
}

/** One line of the file for this key. */
export function keysFileLine(key: FileKey): string {
  return [key.digest, key.namespace ?? OPERATOR_MARK, ...(key.perMinute === null ? [] : [String(key.perMinute)])].join(' ');
}
