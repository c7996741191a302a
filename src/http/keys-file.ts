// Keeps the service's keys in step with SERVICE_API_KEYS_FILE: read whole at start (an unreadable
// file is a configuration error naming the variable), then again on SIGHUP and whenever the file
// changes — fs.watch on its folder (editors and `memory-runtime keys` replace the file by rename,
// which a watch on the file itself would lose) with a poll as the fallback where watching is not
// available (network file systems). Each read is parsed off to the side and swapped in as a whole,
// so requests in flight see the old set or the new one and none is dropped; a revoked key is
// refused from the swap on. A malformed line is logged with its number; the other lines load.
// A file that cannot be read later keeps the keys last read (logged): a botched copy must not
// lock every client out, nor let anyone in.
import { readFileSync, watch, watchFile, unwatchFile, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ConfigError } from '../shared/config.js';
import { parseKeysFile } from '../shared/api-keys-file.js';
import type { Logger } from '../shared/logger.js';
import type { ApiKey } from './auth.js';

/** The poll's period: a change is seen within this even where fs.watch says nothing (revocation within 1 s). */
const POLL_MS = 500;
const VARIABLE = 'SERVICE_API_KEYS_FILE';

export class KeysFile {
  private watcher: FSWatcher | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly onSignal = () => void this.reload('SIGHUP');
  /** Reloads completed (tests wait on it). */
  reloads = 0;
  /** The keys in force, by digest (applied in the same step as they are set here). */
  keys: ReadonlyMap<string, ApiKey> = new Map();

  private constructor(private readonly path: string, private readonly apply: (keys: ReadonlyMap<string, ApiKey>) => void, private readonly log: Logger) {}

  /** Reads the file now (throwing a ConfigError if it cannot be read) and keeps it watched. */
  static open(path: string, apply: (keys: ReadonlyMap<string, ApiKey>) => void, log: Logger): KeysFile {
    const file = new KeysFile(path, apply, log);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(VARIABLE, `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): ${path}`);
    }
    file.install(text, 'start');
    file.watch();
    return file;
  }

  /** Reads the file again; resolves once the keys it holds are the ones in force. */
  reload(reason = 'requested'): Promise<void> {
    if (this.closed) return Promise.resolve();
    // A change during a read is read again afterwards: the last version always wins.
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        try {
          this.install(await readFile(this.path, 'utf8'), reason);
        } catch (error) {
          this.log.error({ variable: VARIABLE, path: this.path, reason: (error as Error).message }, 'keys file unreadable: the keys read before stay in force');
        }
      } while (this.again && !this.closed);
      this.reading = null;
    })();
    return this.reading;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    unwatchFile(this.path);
    process.off('SIGHUP', this.onSignal);
  }

  private install(text: string, reason: string): void {
    const { keys, problems } = parseKeysFile(text);
    for (const { line, reason: problem } of problems) this.log.error({ variable: VARIABLE, path: this.path, line, problem }, 'keys file: line skipped');
    this.keys = new Map(keys.map((key) => [key.digest, key]));
    this.apply(this.keys);
    this.reloads++;
    this.log.info({ variable: VARIABLE, keys: keys.length, skipped: problems.length, reason }, 'keys file loaded');
  }

  private watch(): void {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), (_event, changed) => {
        if (changed === null || changed === name) void this.reload('changed');
      });
      this.watcher.on('error', () => { this.watcher?.close(); this.watcher = null; });
      // A start that fails later must not be kept alive by the watch.
      this.watcher.unref();
    } catch {
      this.watcher = null; // the poll below covers it
    }
    watchFile(this.path, { interval: POLL_MS, persistent: false }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) void this.reload('changed');
    });
    process.on('SIGHUP', this.onSignal);
  }
}
