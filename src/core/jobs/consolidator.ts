// Runs consolidation on request (POST /v1/consolidate) and on a schedule
// (SERVICE_CONSOLIDATE_INTERVAL_SECONDS). Runs never overlap: each waits for the one before.
// The work happens elsewhere — planning in the pool, writes as one writer command — so a run
// never blocks requests. Runs on the main thread.
import type { Logger } from '../../shared/logger.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import type { WriterClient } from '../writer-client.js';
import type { EmbeddingBackfill } from './embedding-backfill.js';
import type { ReadPool } from '../pool/read-pool.js';

export class Consolidator {
  /** The latest run (settled or not); the next one starts after it. */
  private tail: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Runs completed since start (metrics, tests). */
  runs = 0;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly backfill: EmbeddingBackfill,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  /** Starts the background schedule (no-op when the interval is 0). The first run is one interval away. */
  start(): void {
    if (this.intervalMs > 0 && !this.stopped) this.schedule();
  }

  run(): Promise<ConsolidateResult> {
    const next = this.tail.then(() => this.once());
    this.tail = next.catch(() => {});
    return next;
  }

  /** Stops the schedule and waits for a run in progress, before the pool and writer close. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.tail;
  }

  private async once(): Promise<ConsolidateResult> {
    const plan = await this.pool.run({ op: 'planConsolidation', now: Date.now() });
    const result = await this.writer.send({ type: 'consolidate', plan });
    this.runs++;
    // Promoted memories are new rows: they need vectors like any other.
    if (result.promoted > 0) this.backfill.poke();
    return result;
  }

  private schedule(): void {
    // Re-armed only after a run ends, so a slow run delays the next instead of piling up.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run()
        .then((result) => this.log.info(result, 'consolidation run'))
        .catch((error: Error) => this.log.warn({ reason: error.message }, 'consolidation run failed'))
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs).unref();
  }
}
