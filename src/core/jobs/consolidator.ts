// Runs consolidation on request (POST /v1/consolidate) and on a schedule
// (SERVICE_CONSOLIDATE_INTERVAL_SECONDS). Runs never overlap: each waits for the one before.
// The work happens elsewhere — planning in the pool, writes as one writer command — so a run
// never blocks requests. Runs on the main thread.
import type { Logger } from '../../shared/logger.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import type { WriterClient } from '../writer-client.js';
import type { EmbeddingBackfill } from './embedding-backfill.js';
import type { ReadPool } from '../pool/read-pool.js';
import { SerialJob } from './serial-job.js';

export class Consolidator {
  private readonly job: SerialJob<ConsolidateResult>;
  /** Runs completed since start (metrics, tests). */
  runs = 0;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly backfill: EmbeddingBackfill,
    log: Logger,
    private readonly intervalMs: number,
  ) {
    this.job = new SerialJob({
      work: () => this.once(),
      onResult: (result) => log.info(result, 'consolidation run'),
      onError: (error) => log.warn({ reason: error.message }, 'consolidation run failed'),
    });
  }

  /** Starts the background schedule (no-op when the interval is 0). The first run is one interval away. */
  start(): void {
    this.job.every(this.intervalMs);
  }

  /** A run after the ones queued (POST /v1/consolidate). */
  run(): Promise<ConsolidateResult> {
    return this.job.run();
  }

  /** Stops the schedule and waits for a run in progress, before the pool and writer close. */
  stop(): Promise<void> {
    return this.job.stop();
  }

  private async once(): Promise<ConsolidateResult> {
    const plan = await this.pool.run({ op: 'planConsolidation', now: Date.now() });
    const result = await this.writer.send({ type: 'consolidate', plan });
    this.runs++;
    // Promoted memories are new rows: they need vectors like any other.
    if (result.promoted > 0) this.backfill.poke();
    return result;
  }
}
