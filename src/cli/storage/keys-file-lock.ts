// `memory-runtime keys add` and `revoke` read the keys file, change it and rename a new one over
// it. Two at once would each start from the same old file and the later rename would undo the
// earlier change (a concurrent add bringing a revoked key back). They take turns on
// `<file>.lock`, the way the database's instance lock does (shared/instance-lock.ts): a tiny
// SQLite file held with an exclusive lock that the kernel drops when the process ends in any
// way, so a crashed command never leaves a stale lock to clean up. Unlike the instance lock,
// this one waits for the holder (an edit takes milliseconds).
import Database from 'better-sqlite3';
import { CliError } from '../terminal/args.js';

/** How long a command waits for another's edit before giving up. */
const WAIT_MS = 10_000;

/** Runs `edit` holding the keys file's lock. */
export function withKeysFileLock<T>(path: string, edit: () => T): T {
  const lockPath = `${path}.lock`;
  let connection: Database.Database;
  try {
    connection = new Database(lockPath, { timeout: WAIT_MS });
    connection.pragma('journal_mode = MEMORY');
  } catch (error) {
    throw new CliError(`cannot open the keys file's lock ${lockPath}: ${(error as Error).message}`);
  }
  try {
    try {
      // A write transaction: taken once no other connection holds it (busy timeout above).
      connection.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      throw new CliError(`the keys file ${path} is being changed by another command (${lockPath} held for over ${WAIT_MS / 1000} s): ${(error as Error).message}`);
    }
    try {
      return edit();
    } finally {
      connection.exec('ROLLBACK');
    }
  } finally {
    connection.close();
  }
}
