// Runs consolidation on request (POST /v1/consolidate) and on a schedule
// (SERVICE_CONSOLIDATE_INTERVAL_SECONDS). Runs never overlap: each waits for the one before.
// The work happens elsewhere — planning in the pool, writes as one writer command — so a run
// never blocks requests. Runs on the main thread.
// On a cluster (PostgreSQL), a run asked for (POST /v1/consolidate) that finds another in
// progress — this node's scheduled run, another request's, or another node's holding the
// namespace's run lock — waits for it at most `waitMs` (SERVICE_CONSOLIDATE_WAIT_SECONDS), then
// answers 503 CONSOLIDATION_BUSY with Retry-After and is dropped: a client is not held for as
// long as another node's large run takes, and a stopping service is not held by a run queued
// behind another node's. On one node (SQLite) the request waits its turn, as the API promises
// (200 with its own pass): every pass ahead of it is this process's, bounded by its own work.
import { fail } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { ConsolidateResult } from '../../shared/schemas.js';
import type { WriterClient } from '../writer-client.js';
import type { EmbeddingBackfill } from './embedding-backfill.js';
import type { ReadPool } from '../pool/read-pool.js';
import { SerialJob, type RunTrigger } from './serial-job.js';
import { LOCAL_JOB_LOCKS, type JobLocks } from './job-locks.js';
import { CommitTrail } from '../commit-trail.js';

/** A run's counts, and the position of its commit (the answer's Memory-Position). */
interface Run {
  counts: ConsolidateResult;
  position: string | undefined;
}

export class Consolidator {
  /** A run; null for a scheduled run left to the node that holds the schedule. */
  private readonly job: SerialJob<Run | null>;
  /** Runs completed since start (metrics, tests). */
  runs = 0;

  constructor(
    private readonly pool: ReadPool,
    private readonly writer: WriterClient,
    private readonly backfill: EmbeddingBackfill,
    log: Logger,
    private readonly intervalMs: number,
    private readonly locks: JobLocks = LOCAL_JOB_LOCKS,
    private readonly waitMs = 20_000,
    /** The namespace the listing of every namespace is sent under (it reads them all). */
    private readonly serviceNamespace = 'default',
  ) {
    this.job = new SerialJob({
      work: (trigger, signal, namespace) => (namespace === undefined ? this.everyNamespace(trigger, signal) : this.once(trigger, namespace, signal)),
      onResult: (run) => { if (run) log.info(run.counts, 'consolidation run'); },
      onError: (error) => log.warn({ reason: error.message }, 'consolidation run failed'),
    });
  }

  /** Starts the background schedule (no-op when the interval is 0). The first run is one interval away. */
  start(): void {
    this.job.every(this.intervalMs);
  }

  /**
   * A run after the ones queued (POST /v1/consolidate); on a cluster, after any run on another
   * node. `trail` is told the position of the run's commit. On a cluster, CONSOLIDATION_BUSY when
   * it could not start within `waitMs`.
   */
  async run(namespace: string, trail?: CommitTrail): Promise<ConsolidateResult> {
    const giveUp = this.locks.clustered ? new AbortController() : null;
    const timer = giveUp && setTimeout(() => giveUp.abort(fail.consolidationBusy(Math.round(this.waitMs / 1000))), this.waitMs);
    try {
      const run = await this.job.run(giveUp?.signal, namespace);
      // Only a scheduled run is ever skipped (null).
      if (!run) return { promoted: 0, decayed: 0, archived: 0 };
      trail?.note(run.position);
      return run.counts;
    } finally {
      if (timer) clearTimeout(timer);
    }
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
  private async once(trigger: RunTrigger, namespace: string, signal?: AbortSignal): Promise<Run | null> {
    if (trigger === 'schedule' && !(await this.locks.hold('consolidationSchedule'))) return null;
    return this.locks.whileHolding('consolidationRun', async () => {
      const plan = await this.pool.run({ op: 'planConsolidation', namespace, now: Date.now() });
      const trail = new CommitTrail();
      const counts = await this.writer.send(namespace, { type: 'consolidate', plan }, trail);
      this.runs++;
      // Promoted memories are new rows: they need vectors like any other.
      if (counts.promoted > 0) this.backfill.poke(namespace);
      return { counts, position: trail.position };
    }, signal, namespace);
  }

  /** The scheduled run: each namespace consolidated on its own, one after another; their counts summed. */
  private async everyNamespace(trigger: RunTrigger, signal?: AbortSignal): Promise<Run | null> {
    const namespaces = await this.pool.run({ op: 'namespaceNames', namespace: this.serviceNamespace });
    const total: ConsolidateResult = { promoted: 0, decayed: 0, archived: 0 };
    let position: string | undefined;
    let ran = false;
    for (const namespace of namespaces) {
      const run = await this.once(trigger, namespace, signal);
      if (!run) continue;
      ran = true;
      total.promoted += run.counts.promoted;
      total.decayed += run.counts.decayed;
      total.archived += run.counts.archived;
      position = run.position ?? position;
    }
    return ran ? { counts: total, position } : null;
  }
}
