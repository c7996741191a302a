// Which node runs a namespace's background jobs. Over SQLite one node owns the file, so every
// job runs here (LOCAL_JOB_LOCKS). Over PostgreSQL several nodes share the namespace and each job
// must have one runner cluster-wide: postgres-job-locks.ts holds PostgreSQL advisory locks.

export type JobName = 'embeddingBackfill' | 'vectorIndex' | 'consolidationSchedule' | 'consolidationRun';

export interface JobLocks {
  /**
   * Other nodes share the namespace: a job that does not hold its lock retries later, and one that
   * does looks for work other nodes left (their writes do not poke this node's jobs).
   */
  readonly clustered: boolean;
  /** True when this node runs `job`: it held the lock already, or took it now. Kept until close. */
  hold(job: JobName): Promise<boolean>;
  /**
   * Runs `work` holding `job`'s lock for its length, after waiting for any other holder to let go.
   * The wait ends early, rejecting with the signal's reason, when `signal` aborts, and with
   * SHUTTING_DOWN once stopWaiting() was called; `work` itself, once started, is not cut short.
   * With `namespace`, the lock is that namespace's (runs of different namespaces never wait for
   * each other); without, the service's own (SERVICE_NAMESPACE), as hold()'s.
   */
  whileHolding<T>(job: JobName, work: () => Promise<T>, signal?: AbortSignal, namespace?: string): Promise<T>;
  /**
   * The service is stopping: every wait for a lock ends now (SHUTTING_DOWN), and no new one
   * starts. Locks held stay held, for the runs in progress, until close().
   */
  stopWaiting(): void;
  /** Lets go of every lock (another node takes the jobs over). */
  close(): Promise<void>;
}

export const LOCAL_JOB_LOCKS: JobLocks = {
  clustered: false,
  hold: async () => true,
  whileHolding: (_job, work) => work(),
  stopWaiting: () => {},
  close: async () => {},
};

/** How often a clustered job retries its lock, or looks for other nodes' work while it holds it. */
export const CLUSTER_POLL_MS = 2_000;
