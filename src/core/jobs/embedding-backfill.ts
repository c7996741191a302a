// Keeps vectors flowing off the write path: after writes land, the pool embeds the backlog in
// batches and the writer attaches the vectors. One batch is in flight at a time so embedding
// never crowds recall out of the pool. Runs on the main thread; the work happens elsewhere.
import type { Logger } from '../../shared/logger.js';
import type { WriterClient } from '../writer-client.js';
import type { ReadPool } from '../pool/read-pool.js';

const BATCH_SIZE = 64;
const RETRY_MS = 5_000;

export class EmbeddingBackfill {
  private running = false;
  private again = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private idleWaiters: (() => void)[] = [];
  /** Vectors attached since start (metrics, tests). */
  embedded = 0;
  /** Called after vectors were attached (the vector indexer listens). */
  onAttached: (() => void) | null = null;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly log: Logger,
  ) {}

  /** Something was written: embed whatever is pending. Cheap to call often. */
  poke(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.drain();
  }

  /** Resolves when no embedding work is pending (tests and benchmarks wait on it). */
  idle(): Promise<void> {
    if (!this.running && !this.retryTimer) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.settleIdle();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      do {
        this.again = false;
        for (;;) {
          if (this.closed) return;
          const { items, unembeddable, remaining } = await this.pool.run({ op: 'embedPending', limit: BATCH_SIZE });
          if (items.length === 0 && unembeddable.length === 0) break;
          const { attached } = await this.writer.send({ type: 'attachVectors', items, unembeddable });
          this.embedded += attached;
          if (attached > 0) this.onAttached?.();
          if (!remaining) break;
        }
      } while (this.again);
    } catch (error) {
      if (this.closed) return;
      // The embedder may be an unreachable endpoint: rows stay BM25-recallable; try again later.
      this.log.warn({ reason: (error as Error).message }, 'embedding backlog failed; will retry');
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.poke();
      }, RETRY_MS).unref();
    } finally {
      this.running = false;
      if (!this.retryTimer) this.settleIdle();
    }
  }

  private settleIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
