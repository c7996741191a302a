// The PostgreSQL adapter of the store port. One flush = one transaction that first takes
// pg_advisory_xact_lock(write, namespace) — so a namespace's batches serialise across nodes and
// its rowids follow commit order — then runs each command in its own savepoint, commits, and
// reports a WAL position at or past the commit (read-your-writes on replicas).
import type { Config } from '../../shared/config.js';
import { embedderIdentity } from '../../shared/embedder-identity.js';
import { toWireError } from '../../shared/errors.js';
import type { CommandOf, WriterCommand, WriterCommandType, WriterReply, WriterRequest, WriterResults } from '../../shared/messages.js';
import { PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { BatchOutcome, WriteCommandSet, WriteStorePort } from '../store-port.js';
import { applyConsolidation } from './consolidation.js';
import { connectWriter, type Sql, type Tx } from './connect.js';
import { OpenDeletes } from './deletion.js';
import { ensurePostgresNamespace, migratePostgres } from './migrate.js';
import { PgSnapshotRestore } from './restore.js';
import { PgMemoryWriter } from './store.js';
import { PgVectorWriter } from './vectors.js';
import { preparePostgresVectors } from './vectors-setup.js';

function commandSet(config: Config, namespaceId: number, now: () => number): WriteCommandSet<Tx, true> {
  const deletes = new OpenDeletes(namespaceId);
  const memories = new PgMemoryWriter(config, namespaceId, deletes, now);
  const vectors = new PgVectorWriter(namespaceId, now);
  const restore = new PgSnapshotRestore(namespaceId, now);
  return {
    ensureEntity: (command, tx) => memories.ensureEntity(command, tx),
    remember: (command, tx) => memories.remember(command, tx),
    startEpisode: (command, tx) => memories.startEpisode(command, tx),
    addMessage: (command, tx) => memories.addMessage(command, tx),
    endEpisode: (command, tx) => memories.endEpisode(command, tx),
    forgetBegin: (command, tx) => deletes.forgetBegin(command, tx),
    forgetEnd: async (command) => deletes.forgetEnd(command),
    forgetRows: (command, tx) => deletes.forgetRows(command, tx),
    restoreRows: (command, tx) => restore.restoreRows(command, tx),
    attachVectors: (command, tx) => vectors.attachVectors(command, tx),
    reinforce: (command, tx) => memories.reinforce(command, tx),
    // A promotion from rows an open delete holds would outlive the delete (as on SQLite).
    consolidate: (command, tx) => applyConsolidation(tx, namespaceId, command.plan, async (p) => memories.storeOwned(tx, p.ownerId, {
      type: 'semantic', content: p.content, confidence: p.confidence, tier: 1,
      ownerId: p.ownerId, episodeId: p.episodeId, seq: null, role: null, links: [],
    }), (members) => deletes.anyRowHeld(tx, members)),
    installVectorGeneration: (command, tx) => vectors.install(command, tx),
    moveVectors: (command, tx) => vectors.move(command, tx),
    retireVectorGenerations: (_command, tx) => vectors.retire(tx),
  };
}

export class PostgresWriteStore implements WriteStorePort {
  private readonly handlers: WriteCommandSet<Tx, true>;

  constructor(private readonly sql: Sql, config: Config, readonly namespaceId: number, now: () => number = Date.now) {
    this.handlers = commandSet(config, namespaceId, now);
  }

  private execute<K extends WriterCommandType>(command: CommandOf<K>, tx: Tx): Promise<WriterResults[K]> {
    // TypeScript does not narrow `command.type` to K by itself; the command set's type guarantees it.
    return this.handlers[command.type as K](command, tx);
  }

  /** Rejects, committing nothing, when the transaction as a whole failed (connection lost, COMMIT refused). */
  async runBatch(batch: WriterRequest[]): Promise<BatchOutcome> {
    const replies = await this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${this.namespaceId})`;
      const out: WriterReply[] = [];
      for (const request of batch) {
        try {
          const result = await tx.savepoint((sp) => this.execute(request.command as WriterCommand, sp));
          out.push({ id: request.id, ok: true, result });
        } catch (error) {
          out.push({ id: request.id, ok: false, error: toWireError(error) });
        }
      }
      return out;
    });
    // Read after COMMIT returned, so it is at or past the commit record: a replica that has
    // replayed up to it sees the whole flush.
    const [row] = await this.sql<{ position: string }[]>`SELECT pg_current_wal_insert_lsn()::text AS position`;
    return { replies, position: row!.position };
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}

/** Connects to the primary, migrates, checks the embedder and makes sure the namespace exists. */
export async function openPostgresWriteStore(url: string, config: Config, now?: () => number): Promise<PostgresWriteStore> {
  const sql = connectWriter(url);
  try {
    await migratePostgres(sql);
    await preparePostgresVectors(sql, embedderIdentity(config), config.reembedOnChange);
    return new PostgresWriteStore(sql, config, await ensurePostgresNamespace(sql, config.namespace), now);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}
