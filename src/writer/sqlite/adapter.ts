// The SQLite adapter of the store port: the embedded default. Opens and migrates the file,
// prepares the vector table for the configured embedder, and runs each flush synchronously in
// one BEGIN IMMEDIATE transaction (batch.ts) over the WriteStore's commands.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../../shared/config.js';
import { openDatabase, type Db } from '../../shared/db.js';
import { embedderIdentity } from '../../shared/embedder-identity.js';
import type { CommandOf, WriterCommandType, WriterRequest, WriterResults } from '../../shared/messages.js';
import { batchRunner } from './batch.js';
import { ensureNamespace, migrate } from './migrate.js';
import { WriteStore } from './store.js';
import type { BatchOutcome, WriteCommandSet, WriteStorePort } from '../store-port.js';
import { prepareVectorTable } from './vector-table.js';

/** The WriteStore's methods as the command set (no context: the store holds its connection). */
function commandSet(store: WriteStore): WriteCommandSet<void, false> {
  return {
    ensureEntity: (command) => store.ensureEntity(command),
    remember: (command) => store.remember(command),
    startEpisode: (command) => store.startEpisode(command),
    addMessage: (command) => store.addMessage(command),
    endEpisode: (command) => store.endEpisode(command),
    forgetBegin: (command) => store.forgetBegin(command),
    forgetEnd: (command) => store.forgetEnd(command),
    forgetRows: (command) => store.forgetRows(command),
    restoreRows: (command) => store.restoreRows(command),
    attachVectors: (command) => store.attachVectors(command),
    reinforce: (command) => store.reinforce(command),
    consolidate: (command) => store.consolidate(command),
    installVectorGeneration: (command) => store.vectorIndex.install(command),
    moveVectors: (command) => store.vectorIndex.move(command),
    retireVectorGenerations: () => store.vectorIndex.retire(),
  };
}

export class SqliteWriteStore implements WriteStorePort {
  private readonly run;

  constructor(private readonly db: Db, config: Config, readonly namespaceId: number, now?: () => number) {
    const handlers = commandSet(new WriteStore(db, config, namespaceId, now));
    // TypeScript does not narrow `command.type` to K by itself; the command set's type guarantees it.
    const execute = <K extends WriterCommandType>(command: CommandOf<K>): WriterResults[K] =>
      handlers[command.type as K](command);
    this.run = batchRunner(db, execute);
  }

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
    return new SqliteWriteStore(db, config, ensureNamespace(db, config.namespace));
  } catch (error) {
    db?.close();
    throw error;
  }
}
