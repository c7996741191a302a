// Runs consolidation on request (POST /v1/consolidate) and on a schedule
// (SERVICE_CONSOLIDATE_INTERVAL_SECONDS). Runs never overlap: each waits for the one before.
// The work happens elsewhere — planning in the pool, writes as one writer command — so a run
// never blocks requests. Runs on the main thread.
import type { Logger } from '../../shared/logger.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import type { WriterClient } from '../writer-client.js';
import type { EmbeddingBackfill } from './embedding-backfill.js';
import type { ReadPool } from '../pool/read-pool.js';
import { SerialJob, type RunTrigger } from './serial-job.js';
import { LOCAL_JOB_LOCKS, type JobLocks } from './job-locks.js';

export class Consolidator {
  /** A run's counts; null for a scheduled run left to the node that holds the schedule. */
  private readonly job: SerialJob<ConsolidateResult | null>;
  /** Runs completed since start (metrics, tests). */
  runs = 0;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly backfill: EmbeddingBackfill,
    log: Logger,
    private readonly intervalMs: number,
    private readonly locks: JobLocks = LOCAL_JOB_LOCKS,
  ) {
    this.job = new SerialJob({
      work: (trigger) => this.once(trigger),
      onResult: (result) => { if (result) log.info(result, 'consolidation run'); },
      onError: (error) => log.warn({ reason: error.message }, 'consolidation run failed'),
    });
  }

  /** Starts the background schedule (no-op when the interval is 0). The first run is one interval away. */
  start(): void {
    this.job.every(this.intervalMs);
  }

  /** A run after the ones queued (POST /v1/consolidate); on a cluster, after any run on another node. */
  async run(): Promise<ConsolidateResult> {
    // Only a scheduled run is ever skipped (null).
    return (await this.job.run()) ?? { promoted: 0, decayed: 0, archived: 0 };
  }

  /** Stops the schedule and waits for a run in progress, before the pool and writer close. */
  stop(): Promise<void> {
    return this.job.stop();
  }

  /**
   * One run. On a cluster the schedule belongs to one node (the first to hold its lock), while a
   * run asked for runs on the node asked, and answers its own counts; either way no two runs
   * overlap anywhere: each holds the run lock from planning to the writer's answer.
   */
  private async once(trigger: RunTrigger): Promise<ConsolidateResult | null> {
    if (trigger === 'schedule' && !(await this.locks.hold('consolidationSchedule'))) return null;
    return this.locks.whileHolding('consolidationRun', async () => {
      const plan = await this.pool.run({ op: 'planConsolidation', now: Date.now() });
      const result = await this.writer.send({ type: 'consolidate', plan });
      this.runs++;
      // Promoted memories are new rows: they need vectors like any other.
      if (result.promoted > 0) this.backfill.poke();
      return result;
    });
  }
}
