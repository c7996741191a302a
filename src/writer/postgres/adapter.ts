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
import { EntityCache, PgRowState } from './row-state.js';
import { readDuplicatesAhead, type DuplicateAhead } from './read-ahead.js';
import { countedByWriter, DocumentCounts } from './document-counts.js';
import { PgRows } from './rows.js';
import { unstorableText } from './unstorable.js';
import { BoundedMap } from '../../shared/bounded-map.js';
import { ABSENT_NAMESPACE_ID, createsNamespace, NAMESPACE_CONTEXTS } from '../commands/namespaces.js';

/** Namespace names whose ids this writer remembers. */
const NAMESPACE_IDS = 100_000;
import { preparePostgresVectors } from './vectors-setup.js';

/** SQLSTATE foreign_key_violation: a cached entity may be gone from the database. */
const FOREIGN_KEY_VIOLATION = '23503';
/**
 * How long a flush waits for its commit's WAL position. The flush is committed already; a
 * connection that drops right after COMMIT can leave this read in the client's own reconnect
 * loop (a multi-host URL never gives up), and the flush's replies must not wait for the outage.
 */
const COMMIT_POSITION_WAIT_MS = 1_000;

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
  /** Each namespace's cached entities, for the most recently written namespaces. */
  private readonly states: BoundedMap<number, PgRowState>;
  /** Cached entities of every namespace, bounded in total. */
  private readonly entities = new EntityCache();
  /** Namespace ids by name: a namespace's row is never removed, so a found id stays valid. */
  private readonly ids = new BoundedMap<string, number>(NAMESPACE_IDS);
  private readonly deletes = new OpenDeletes();
  private readonly episodeTtlMs: number;
  private readonly dimensions: number;
  private readonly now: () => number;
  readonly namespace: string;

  constructor(private readonly sql: Sql, config: Config, readonly namespaceId: number, now: () => number = Date.now) {
    this.dimensions = embedderIdentity(config).dimensions;
    this.states = new BoundedMap(NAMESPACE_CONTEXTS);
    this.episodeTtlMs = config.episodeTtlMs;
    this.now = now;
    this.namespace = config.namespace;
    this.ids.set(config.namespace, namespaceId);
  }

  private stateOf(namespaceId: number): PgRowState {
    return this.states.getOrCreate(namespaceId, () => new PgRowState(namespaceId, this.dimensions, this.now, this.entities));
  }

  /**
   * Each request's namespace id. Created (outside the flush, idempotently: another node may
   * create it at the same time) only for a command that stores something; otherwise a
   * namespace that does not exist is ABSENT_NAMESPACE_ID, where nothing is found.
   */
  private async namespaceIds(batch: WriterRequest[]): Promise<number[]> {
    const out: number[] = [];
    for (const request of batch) {
      let id = this.ids.get(request.namespace);
      if (id === undefined) {
        if (createsNamespace(request.command.type)) id = await ensurePostgresNamespace(this.sql, request.namespace, this.now());
        else [id] = (await this.sql<{ id: number }[]>`SELECT id FROM namespaces WHERE name = ${request.namespace}`).map((row) => row.id);
        if (id !== undefined) this.ids.set(request.namespace, id);
      }
      out.push(id ?? ABSENT_NAMESPACE_ID);
    }
    return out;
  }

  /**
   * The command's rule over this transaction's (or savepoint's) rows, in its namespace, and the
   * memories it added (less those it deleted), for the caller to count once the command stands.
   */
  private async execute(command: WriterCommand, tx: Tx, namespaceId: number, ahead?: DuplicateAhead): Promise<{ result: unknown; documentsAdded: number }> {
    const rows = new PgRows(tx, this.stateOf(namespaceId), ahead);
    const ctx: RuleContext = { rows, namespaceId, now: this.now, episodeTtlMs: this.episodeTtlMs, deletes: this.deletes };
    const result = await runAwaiting(ruleFor(command, ctx));
    return { result, documentsAdded: rows.documentsAdded };
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
    const namespaceIds = await this.namespaceIds(batch);
    // Each rerun starts its savepoints strictly earlier, so this ends (at 0, all in savepoints).
    while (typeof (replies = await this.attempt(batch, namespaceIds, savepointsFrom)) === 'number') savepointsFrom = replies;
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
    let timer: NodeJS.Timeout | undefined;
    const read = this.sql<{ position: string }[]>`SELECT pg_current_wal_flush_lsn()::text AS position`
      .then(([row]) => row?.position ?? null, () => null);
    const giveUp = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), COMMIT_POSITION_WAIT_MS); });
    try {
      return await Promise.race([read, giveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One transaction over the batch, commands from `savepointsFrom` on each in a savepoint.
   * Returns the index of a command that failed outside a savepoint (all rolled back), to rerun.
   */
  private async attempt(batch: WriterRequest[], namespaceIds: number[], savepointsFrom: number): Promise<WriterReply[] | number> {
    const used = [...new Set(namespaceIds)].filter((id) => id !== ABSENT_NAMESPACE_ID).sort((a, b) => a - b);
    const states = used.map((id) => this.stateOf(id));
    // Without savepoints the flush commits or rolls back as a whole: its entities can be cached.
    for (const state of states) state.beginFlush(savepointsFrom === batch.length);
    const openDeletes = this.deletes.save();
    let committed = false;
    try {
      // Read committed whatever the database's default: under repeatable read a transaction's
      // snapshot is taken at its first query — the lock — and would not see the flush that
      // held the lock before it (a fact stored twice).
      const replies = await this.sql.begin('isolation level read committed', async (tx) => {
        // Every namespace of the flush, in ascending order: two nodes' flushes over the same
        // namespaces take their locks in the same order, so they wait for each other, never deadlock.
        // The first also leaves the document counts to this flush (document-counts.ts). Without a
        // namespace nothing is stored (ABSENT_NAMESPACE_ID holds no rows), so nothing is counted.
        for (const [i, id] of used.entries()) {
          await (i === 0 ? tx`SELECT ${countedByWriter(tx)}, pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${id})`
            : tx`SELECT pg_advisory_xact_lock(${PG_LOCK_CLASS.write}, ${id})`);
        }
        const ahead = await readDuplicatesAhead(tx, batch, namespaceIds, (id) => this.stateOf(id), this.deletes);
        const counts = new DocumentCounts();
        const out: WriterReply[] = [];
        for (const [index, request] of batch.entries()) {
          if (index >= savepointsFrom) {
            out.push(await this.inSavepoint(tx, request, namespaceIds[index]!, counts, ahead.get(index)));
            continue;
          }
          // A lost connection or a standby fails the whole flush: rerunning it there cannot help.
          const { result, documentsAdded } = await this.execute(request.command as WriterCommand, tx, namespaceIds[index]!, ahead.get(index)).catch((cause: unknown) => { throw lostPrimary(cause) ? cause : new NeedsSavepoints(index, cause); });
          counts.add(namespaceIds[index]!, documentsAdded);
          out.push({ id: request.id, ok: true, result });
        }
        if (used.length > 0) await counts.write(tx);
        return out;
      });
      committed = true;
      return replies;
    } catch (error) {
      if (isForeignKeyViolation(error)) this.forgetEntities();
      if (error instanceof NeedsSavepoints) return error.index;
      throw error;
    } finally {
      if (!committed) this.deletes.restore(openDeletes);
      for (const state of states) state.endFlush(committed);
    }
  }

  /**
   * One command in its own savepoint; a failure undoes it alone. A foreign-key violation may be
   * a stale cached entity: the cache is dropped and the command runs once more.
   */
  private async inSavepoint(tx: Tx, request: WriterRequest, namespaceId: number, counts: DocumentCounts, ahead?: DuplicateAhead, retried = false): Promise<WriterReply> {
    const before = this.deletes.save();
    try {
      const { result, documentsAdded } = await tx.savepoint((sp) => this.execute(request.command as WriterCommand, sp, namespaceId, ahead));
      // Released: the command's rows stand (until the flush's COMMIT), so they count.
      counts.add(namespaceId, documentsAdded);
      return { id: request.id, ok: true, result };
    } catch (error) {
      this.deletes.restore(before);
      if (lostPrimary(error)) throw error;
      if (!retried && isForeignKeyViolation(error)) {
        this.forgetEntities();
        // Its owner may be another entity now: read as usual.
        return this.inSavepoint(tx, request, namespaceId, counts, undefined, true);
      }
      return { id: request.id, ok: false, error: toWireError(unstorableText(request.command as WriterCommand, error) ?? error) };
    }
  }

  /** The connection closed: whatever it reconnects to may not hold the cached entities. */
  connectionClosed(): void {
    this.forgetEntities();
  }

  private forgetEntities(): void {
    this.entities.clear();
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
