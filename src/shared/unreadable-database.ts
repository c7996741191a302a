// A database file SQLite cannot read (damaged, or not a database at all) stops the start-up.
// The operator needs the file, SQLite's own words and what to do — not just "SQLITE_CORRUPT".
const UNREADABLE_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE']);

export class UnreadableDatabaseError extends Error {
  constructor(readonly path: string, readonly sqliteCode: string, readonly sqliteMessage: string) {
    super(`cannot open the database ${path}: SQLite says "${sqliteMessage}" (${sqliteCode}). ` +
      `The file is damaged or is not a memory-runtime database. Stop here and keep a copy of it (with its -wal and -shm files); ` +
      `then either restore it from a backup, or try \`sqlite3 ${path} .recover | sqlite3 recovered.db\` and point SERVICE_PATH ` +
      `at the recovered file, or move the files aside to start with an empty database (deletion snapshots in snapshots/ can be restored into it).`);
    this.name = 'UnreadableDatabaseError';
  }
}

/** The error to report when `error` (from opening or migrating `path`) means the file is unreadable. */
export function unreadableDatabase(path: string, error: unknown): UnreadableDatabaseError | null {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !UNREADABLE_CODES.has(code)) return null;
  return new UnreadableDatabaseError(path, code, typeof message === 'string' ? message : code);
}
