// The PostgreSQL adapter of the store port. One flush = one transaction that first takes
// pg_advisory_xact_lock(write, namespace) — so a namespace's batches serialise across nodes and
// its rowids follow commit order — then runs each command in its own savepoint, commits, and
// reports a WAL position at or past the commit (read-your-writes on replicas).
import type { Config } from '../../shared/config.js';
import { embedderIdentity } from '../../shared/embedder-identity.js';
import { toWireError } from '../../shared/errors.js';
import type { CommandOf, WriterCommand, WriterCommandType, WriterReply, WriterRequest, WriterResults } from '../../shared/protocol/writer.js';
import { PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { BatchOutcome, WriteCommandSet, WriteStorePort } from '../store-port.js';
import { applyConsolidation } from './consolidation.js';
import { type Sql, type Tx } from './connect.js';
import { OpenDeletes } from './deletion.js';
import { ensurePostgresNamespace, migratePostgres } from './migrate.js';
import { PrimaryConnection, lostPrimary, type DatabaseState } from './primary.js';
import { PrimaryWriteStore } from './primary-store.js';
import { PgSnapshotRestore } from './restore.js';
import { PgMemoryWriter } from './store.js';
import { unstorableText } from './unstorable.js';
import { PgVectorWriter } from './vectors.js';
import { preparePostgresVectors } from './vectors-setup.js';

function commandSet(memories: PgMemoryWriter, deletes: OpenDeletes, namespaceId: number, dimensions: number, now: () => number): WriteCommandSet<Tx, true> {
  const vectors = new PgVectorWriter(namespaceId, dimensions, now);
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

/** SQLSTATE foreign_key_violation: a cached entity may be gone from the database. */
const FOREIGN_KEY_VIOLATION = '23503';

function isForeignKeyViolation(error: unknown): boolean {
  const cause = error instanceof NeedsSavepoints ? error.cause : error;
  return (cause as { code?: unknown } | null)?.code === FOREIGN_KEY_VIOLATION;
}

/** A command failed in a flush run without savepoints: the flush is run again with them. */
class NeedsSavepoints extends Error {
  constructor(readonly index: number, cause: unknown) {
    super(`command ${index} failed; the flush runs again with a savepoint per command from it on`, { cause });
  }
}

export class PostgresWriteStore implements WriteStorePort {
  private readonly handlers: WriteCommandSet<Tx, true>;
  private readonly memories: PgMemoryWriter;
  private readonly deletes: OpenDeletes;

  constructor(private readonly sql: Sql, config: Config, readonly namespaceId: number, now: () => number = Date.now) {
    this.deletes = new OpenDeletes(namespaceId);
    this.memories = new PgMemoryWriter(config, namespaceId, this.deletes, now);
    this.handlers = commandSet(this.memories, this.deletes, namespaceId, embedderIdentity(config).dimensions, now);
  }

  private execute<K extends WriterCommandType>(command: CommandOf<K>, tx: Tx): Promise<WriterResults[K]> {
    // TypeScript does not narrow `command.type` to K by itself; the command set's type guarantees it.
    return this.handlers[command.type as K](command, tx);
  }

  /**
   * Rejects, committing nothing, when the transaction as a whole failed (connection lost, COMMIT
   * refused). A savepoint costs two round trips per command, and most flushes have no failing
   * command: the flush runs without them first, and only if a command fails is it rolled back
   * and run again with one savepoint per command from the failing one on (nothing of the
   * earlier attempt was committed; the commands before it ran without failing).
   */
  async runBatch(batch: WriterRequest[]): Promise<BatchOutcome> {
    let savepointsFrom = batch.length;
    let replies: WriterReply[] | number;
    // Each rerun starts its savepoints strictly earlier, so this ends (at 0, all in savepoints).
    while (typeof (replies = await this.attempt(batch, savepointsFrom)) === 'number') savepointsFrom = replies;
    return { replies, position: await this.commitPosition() };
  }

  /**
   * A WAL position at or past the flush's commit record, or null when it cannot be read. Read
   * after COMMIT returned; the flush LSN, not the insert LSN: the insert LSN can point past a
   * page header that is not written yet, which a replica then never reaches. The flush is
   * committed whatever happens here (the connection may drop right after COMMIT in a failover):
   * its replies stand, and without a position this node's recalls read from the primary until a
   * later flush reports one (core/node-position.ts); those writes' answers carry no position.
   */
  private async commitPosition(): Promise<string | null> {
    try {
      const [row] = await this.sql<{ position: string }[]>`SELECT pg_current_wal_flush_lsn()::text AS position`;
      return row?.position ?? null;
    } catch {
      return null;
    }
  }

  /**
   * One transaction over the batch, commands from `savepointsFrom` on each in a savepoint.
   * Returns the index of a command that failed outside a savepoint (all rolled back), to rerun.
   */
  private async attempt(batch: WriterRequest[], savepointsFrom: number): Promise<WriterReply[] | number> {
    // Without savepoints the flush commits or rolls back as a whole: its entities can be cached.
    this.memories.beginFlush(savepointsFrom === batch.length);
    const openDeletes = this.deletes.save();
    let committed = false;
    try {
      // Read committed whatever the database's default: under repeatable read a transaction's
      // snapshot is taken at its first query — the lock — and would not see the flush that
      // held the lock before it (a fact stored twice).
      const replies = await this.sql.begin('isolation level read committed', async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${this.namespaceId})`;
        const out: WriterReply[] = [];
        for (const [index, request] of batch.entries()) {
          if (index >= savepointsFrom) {
            out.push(await this.inSavepoint(tx, request));
            continue;
          }
          // A lost connection or a standby fails the whole flush: rerunning it there cannot help.
          const result = await this.execute(request.command as WriterCommand, tx).catch((cause: unknown) => { throw lostPrimary(cause) ? cause : new NeedsSavepoints(index, cause); });
          out.push({ id: request.id, ok: true, result });
        }
        return out;
      });
      committed = true;
      return replies;
    } catch (error) {
      if (isForeignKeyViolation(error)) this.memories.forgetEntities();
      if (error instanceof NeedsSavepoints) return error.index;
      throw error;
    } finally {
      if (!committed) this.deletes.restore(openDeletes);
      this.memories.endFlush(committed);
    }
  }

  /**
   * One command in its own savepoint; a failure undoes it alone. A foreign-key violation may be
   * a stale cached entity: the cache is dropped and the command runs once more.
   */
  private async inSavepoint(tx: Tx, request: WriterRequest, retried = false): Promise<WriterReply> {
    const before = this.deletes.save();
    try {
      return { id: request.id, ok: true, result: await tx.savepoint((sp) => this.execute(request.command as WriterCommand, sp)) };
    } catch (error) {
      this.deletes.restore(before);
      if (lostPrimary(error)) throw error;
      if (!retried && isForeignKeyViolation(error)) {
        this.memories.forgetEntities();
        return this.inSavepoint(tx, request, true);
      }
      return { id: request.id, ok: false, error: toWireError(unstorableText(request.command as WriterCommand, error) ?? error) };
    }
  }

  /** The connection closed: whatever it reconnects to may not hold the cached entities. */
  connectionClosed(): void {
    this.memories.forgetEntities();
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}

/**
 * Connects to the primary, migrates, checks the embedder and makes sure the namespace exists.
 * `onState` is told when the primary goes away and comes back (primary.ts).
 */
export async function openPostgresWriteStore(url: string, config: Config, now?: () => number, onState?: DatabaseState): Promise<WriteStorePort> {
  let store: PostgresWriteStore | null = null;
  const primary = new PrimaryConnection(url, config.postgres?.writeWaitMs ?? 3_000, () => store?.connectionClosed(), onState);
  const { sql } = primary;
  try {
    await migratePostgres(sql);
    await preparePostgresVectors(sql, embedderIdentity(config), config.reembedOnChange);
    store = new PostgresWriteStore(sql, config, await ensurePostgresNamespace(sql, config.namespace), now);
    return new PrimaryWriteStore(store, primary);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}
