// The PostgreSQL adapter of the store port. One flush = one transaction that first takes
// pg_advisory_xact_lock(write, namespace) — so a namespace's batches serialise across nodes and
// its rowids follow commit order — then runs each command's rule (../commands/) over this
// transaction's rows (rows.ts), in a savepoint when a command failed, commits, and reports a
// WAL position at or past the commit (read-your-writes on replicas).
import type { Config } from '../../shared/config.js';
import { embedderIdentity } from '../../shared/embedder-identity.js';
import { toWireError } from '../../shared/errors.js';
import type { WriterCommand, WriterReply, WriterRequest } from '../../shared/protocol/writer.js';
import { PG_LOCK_CLASS } from '../../shared/postgres-schema.js';
import type { RuleContext } from '../commands/context.js';
import { ruleFor } from '../commands/index.js';
import { OpenDeletes } from '../commands/open-deletes.js';
import { runAwaiting } from '../commands/run.js';
import type { BatchOutcome, WriteStorePort } from '../commands/store-port.js';
import { type Sql, type Tx } from './connect.js';
import { ensurePostgresNamespace, migratePostgres } from './migrate.js';
import { PrimaryConnection, lostPrimary, type DatabaseState } from './primary.js';
import { PrimaryWriteStore } from './primary-store.js';
import { PgRowState } from './row-state.js';
import { PgRows } from './rows.js';
import { unstorableText } from './unstorable.js';
import { preparePostgresVectors } from './vectors-setup.js';

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
  private readonly memories: PgRowState;
  private readonly deletes = new OpenDeletes();
  private readonly episodeTtlMs: number;
  private readonly now: () => number;

  constructor(private readonly sql: Sql, config: Config, readonly namespaceId: number, now: () => number = Date.now) {
    this.memories = new PgRowState(namespaceId, embedderIdentity(config).dimensions, now);
    this.episodeTtlMs = config.episodeTtlMs;
    this.now = now;
  }

  /** The command's rule over this transaction's (or savepoint's) rows. */
  private execute(command: WriterCommand, tx: Tx): Promise<unknown> {
    const ctx: RuleContext = {
      rows: new PgRows(tx, this.memories), namespaceId: this.namespaceId, now: this.now,
      episodeTtlMs: this.episodeTtlMs, deletes: this.deletes,
    };
    return runAwaiting(ruleFor(command, ctx));
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
