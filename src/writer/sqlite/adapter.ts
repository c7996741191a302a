// The SQLite adapter of the store port: the embedded default. Opens and migrates the file,
// prepares the vector table for the configured embedder, and runs each flush synchronously in
// one BEGIN IMMEDIATE transaction (batch.ts), each command's rule (../commands/) straight
// through over the SQLite rows (rows.ts).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../../shared/config.js';
import { openDatabase, type Db } from '../../shared/db.js';
import { embedderIdentity } from '../../shared/embedder-identity.js';
import type { CommandOf, WriterCommand, WriterCommandType, WriterRequest, WriterResults } from '../../shared/protocol/writer.js';
import type { RuleContext } from '../commands/context.js';
import { ruleFor } from '../commands/index.js';
import { OpenDeletes } from '../commands/open-deletes.js';
import { runNow } from '../commands/run.js';
import type { BatchOutcome, WriteStorePort } from '../commands/store-port.js';
import { batchRunner } from './batch.js';
import { DeferredTextIndex } from './deferred-text-index.js';
import { BoundedMap } from '../../shared/bounded-map.js';
import { ABSENT_NAMESPACE_ID, createsNamespace, NAMESPACE_CONTEXTS } from '../commands/namespaces.js';
import { continueVectorSeq } from './vector-seq.js';
import { ensureNamespace, migrate } from './migrate.js';
import { SqliteRows } from './rows.js';
import { prepareVectorTable } from './vector-table.js';

/** The rules' context over a SQLite connection (the service's writer, the offline CLI, tests). */
export function sqliteRuleContext(
  db: Db, namespaceId: number, config: Pick<Config, 'episodeTtlMs'>, now: () => number = Date.now, deletes = new OpenDeletes(),
): RuleContext {
  return { rows: new SqliteRows(db, namespaceId, now), namespaceId, now, episodeTtlMs: config.episodeTtlMs, deletes };
}

/** Runs commands one at a time, synchronously, in whatever transaction the caller holds. */
export class SqliteCommands {
  readonly context: RuleContext;

  constructor(db: Db, config: Pick<Config, 'episodeTtlMs'>, namespaceId: number, now?: () => number, deletes?: OpenDeletes) {
    this.context = sqliteRuleContext(db, namespaceId, config, now, deletes);
  }

  run<K extends WriterCommandType>(command: CommandOf<K>): WriterResults[K] {
    return runNow(ruleFor(command, this.context));
  }
}

/**
 * The commands of every namespace, each over its own row port, made when first used (inside the
 * flush's transaction, so a namespace created by a command rolls back with it) and kept for the
 * most recently used namespaces. One set of open deletes for all: a delete's hold must outlive
 * its namespace's context being dropped.
 */
class NamespacedCommands {
  private readonly byId: BoundedMap<number, SqliteCommands>;
  private readonly deletes = new OpenDeletes();
  private readonly find;
  private readonly create;

  constructor(private readonly db: Db, private readonly config: Pick<Config, 'episodeTtlMs'>, private readonly now?: () => number) {
    this.byId = new BoundedMap(NAMESPACE_CONTEXTS);
    this.find = db.prepare<[string], number>('SELECT id FROM namespaces WHERE name = ?').pluck();
    this.create = db.prepare('INSERT OR IGNORE INTO namespaces (name, created_at) VALUES (?, ?)');
  }

  run(namespace: string, command: WriterCommand): unknown {
    let id = this.find.get(namespace);
    if (id === undefined && createsNamespace(command.type)) {
      this.create.run(namespace, (this.now ?? Date.now)());
      id = this.find.get(namespace);
    }
    const namespaceId = id ?? ABSENT_NAMESPACE_ID;
    const commands = this.byId.getOrCreate(namespaceId, () => new SqliteCommands(this.db, this.config, namespaceId, this.now, this.deletes));
    return commands.run(command);
  }
}

export class SqliteWriteStore implements WriteStorePort {
  private readonly run;

  constructor(private readonly db: Db, config: Config, readonly namespaceId: number, now?: () => number) {
    const commands = new NamespacedCommands(db, config, now);
    this.namespace = config.namespace;
    this.run = batchRunner(db, (command: WriterCommand, namespace: string) => commands.run(namespace, command), new DeferredTextIndex(db));
  }

  readonly namespace: string;

  runBatch(batch: WriterRequest[]): BatchOutcome {
    return { replies: this.run.immediate(batch) };
  }

  close(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.close();
  }
}

/** Opens (creating the folder and file when new) and migrates the configured database file. */
export function openSqliteWriteStore(config: Config): SqliteWriteStore {
  let db: Db | null = null;
  try {
    mkdirSync(dirname(config.dbPath), { recursive: true });
    db = openDatabase(config.dbPath, { readonly: false, synchronous: config.synchronous });
    migrate(db);
    prepareVectorTable(db, embedderIdentity(config), config.reembedOnChange);
    continueVectorSeq(db);
    return new SqliteWriteStore(db, config, ensureNamespace(db, config.namespace));
  } catch (error) {
    db?.close();
    throw error;
  }
}
