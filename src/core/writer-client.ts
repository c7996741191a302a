// Main-thread handle on the writer thread: sends typed commands and resolves each promise
// when the reply with the same id arrives (that is, after its transaction committed).
import { Worker } from 'node:worker_threads';
import type { Config } from '../shared/config.js';
import { fail, ServiceError } from '../shared/errors.js';
import type { CommandOf, WriterRequest, WriterBatchReport, WriterCommandType, WriterDatabaseState, WriterReady, WriterReply, WriterResults, WriterStartFailed } from '../shared/protocol/writer.js';
import type { PriorityChange } from '../shared/os-thread.js';
import type { CommitTrail } from './commit-trail.js';
import { NodePosition } from './node-position.js';

export interface WriterStats {
  transactions: number;
  commands: number;
  largestBatch: number;
}

interface Pending {
  resolve: (value: any) => void;
  reject: (error: ServiceError) => void;
  trail: CommitTrail | undefined;
}

export class WriterClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failure: ServiceError | null = null;
  private closing = false;
  readonly stats: WriterStats = { transactions: 0, commands: 0, largestBatch: 0 };
  /**
   * PostgreSQL: what this node's writes require of a recall. A recall carries its `readAfter`, so
   * a replica serves it only once it has replayed every write this node acknowledged
   * (read-your-writes) — or the primary does, while the last commit's position is unknown.
   */
  readonly position = new NodePosition();
  /** PostgreSQL: the writer has no primary now (writes answer DATABASE_UNAVAILABLE; health says degraded). */
  databaseUnavailable = false;
  /** Called when the writer loses the primary or finds it again (logged). */
  onDatabaseState: ((available: boolean) => void) | null = null;
  /** Called after every committed transaction (metrics hook). */
  onBatch: ((report: WriterBatchReport) => void) | null = null;
  /**
   * Called once if the thread dies (an uncaught error, a native crash, an exit) other than by
   * close(): every write fails from then on, so the service reports unhealthy and exits.
   */
  onFailure: ((cause: string) => void) | null = null;

  private constructor(
    private readonly worker: Worker,
    readonly namespaceId: number,
    /** Whether the writer runs below the process's priority (see writer/thread.ts). */
    readonly priority: PriorityChange,
  ) {
    worker.on('message', (message: WriterReply | WriterBatchReport | WriterDatabaseState) => {
      if ('type' in message && message.type === 'database') {
        this.databaseUnavailable = !message.available;
        this.onDatabaseState?.(message.available);
      } else if ('type' in message) this.recordBatch(message);
      else this.settle(message);
    });
    worker.on('error', (error) => this.died(`uncaught error in the writer thread: ${error.message}`));
    worker.on('exit', (code) => {
      if (this.closing) this.fail(fail.shuttingDown());
      else this.died(`the writer thread exited (code ${code})`);
    });
  }

  static start(config: Config): Promise<WriterClient> {
    const worker = new Worker(new URL('../writer/thread.js', import.meta.url), { workerData: { config } });
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      const onExit = (code: number) => reject(new Error(`writer thread exited during start-up (code ${code})`));
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.once('message', (message: WriterReady | WriterStartFailed) => {
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (message.type === 'ready') resolve(new WriterClient(worker, message.namespaceId, message.priority));
        else reject(Object.assign(new Error(message.message), { code: message.code }));
      });
    });
  }

  /** Commands sent but not yet acknowledged. */
  get queueDepth(): number {
    return this.pending.size;
  }

  /**
   * Runs `command` in `namespace` (a name the caller resolved: the request's, or the one a
   * background job is serving). `trail`, when given, is told the position of the batch that
   * committed the command.
   */
  send<T extends WriterCommandType>(namespace: string, command: CommandOf<T>, trail?: CommitTrail): Promise<WriterResults[T]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, trail });
      this.worker.postMessage({ id, namespace, command } satisfies WriterRequest);
    });
  }

  /** Why writes fail, once the thread has died (null while it runs). */
  get failed(): ServiceError | null {
    return this.closing ? null : this.failure;
  }

  /** Lets queued commands commit, then closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (this.failure) return;
    this.closing = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ type: 'close' });
    await exited;
  }

  private recordBatch(report: WriterBatchReport): void {
    this.stats.transactions++;
    this.stats.commands += report.commands;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, report.commands);
    // Reports arrive in commit order, so the newest is the furthest position.
    this.position.committed(report.position);
    this.onBatch?.(report);
  }

  private settle(reply: WriterReply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (!reply.ok) return waiter.reject(ServiceError.fromWire(reply.error));
    waiter.trail?.note(reply.position);
    waiter.resolve(reply.result);
  }

  private died(cause: string): void {
    if (this.failure) return;
    this.fail(fail.writerStopped());
    this.onFailure?.(cause);
  }

  private fail(error: ServiceError): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
