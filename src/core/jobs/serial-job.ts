// The one loop behind the main thread's background jobs (embedding backfill, consolidation,
// IVF upkeep): runs of a job never overlap — each starts after the one before settled — so a
// job never holds more than one pool thread or writer command at a time, and never races
// itself. Three ways to start a run:
//   run()    — queued behind the others; its result or error goes to the caller;
//   poke()   — "something changed": coalesces, since one run not yet started sees every change
//              made before it starts; optionally after a delay (a debounce); retryAfter() is
//              the delayed poke of a failed run's back-off;
//   every(ms) — on a schedule, re-armed only when the run ends, so a slow run delays the next
//              instead of piling up.
// Poked and scheduled runs report to onResult/onError (a background failure is logged, not
// thrown), before the next run starts. stop() ends the schedule and pokes; it does not cancel a run in progress.

/** What started a run. */
export type RunTrigger = 'run' | 'poke' | 'schedule';

export interface SerialJobOptions<T> {
  /**
   * One run. It may check `stopped` between steps to end early. `signal`: the caller of run()
   * may still give up while the run waits for something of its own (a lock another node holds).
   */
  work: (trigger: RunTrigger, signal?: AbortSignal, subject?: string) => Promise<T>;
  /** A poked or scheduled run failed (not called once the job is stopped). */
  onError: (error: Error) => void;
  /** A poked or scheduled run succeeded. */
  onResult?: (result: T) => void;
}

export class SerialJob<T> {
  /** The latest run queued (settled or not); the next one starts after it. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Runs queued or running. */
  private inFlight = 0;
  /** A poked run is queued and has not started yet: another poke adds nothing. */
  private pokeQueued = false;
  private pokeTimer: NodeJS.Timeout | null = null;
  private scheduleTimer: NodeJS.Timeout | null = null;
  private idleWaiters: (() => void)[] = [];
  private isStopped = false;

  constructor(private readonly options: SerialJobOptions<T>) {}

  get stopped(): boolean {
    return this.isStopped;
  }

  /** A poke(delayMs) is waiting for its delay (a debounce or a retry back-off). */
  get delayedPokeWaiting(): boolean {
    return this.pokeTimer !== null;
  }

  /**
   * Queues a run behind the others; resolves or rejects with it. If `signal` aborts before the
   * run starts, this rejects at once with the signal's reason and the run is skipped (the runs
   * queued behind it do not wait for a run nobody wants any more). `subject` is handed to the
   * work as it is (the namespace a consolidation run asked for).
   */
  run(signal?: AbortSignal, subject?: string): Promise<T> {
    let started = false;
    const result = this.enqueue('run', () => {
      if (signal?.aborted) throw signal.reason;
      started = true;
    }, signal, subject);
    this.settleAfter(result.catch(() => {}));
    if (!signal) return result;
    return new Promise<T>((resolve, reject) => {
      const giveUp = () => { if (!started) reject(signal.reason); };
      if (signal.aborted) giveUp();
      signal.addEventListener('abort', giveUp, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener('abort', giveUp));
    });
  }

  /** Asks for a run now, or after `delayMs`: none is added while a poked run waits to start. */
  poke(delayMs = 0): void {
    if (this.isStopped || this.pokeQueued) return;
    if (delayMs === 0) {
      this.pokeQueued = true;
      void this.inBackground('poke', () => { this.pokeQueued = false; });
      return;
    }
    this.delayPoke(delayMs);
  }

  /**
   * A poke after `delayMs` (a failed run's back-off), armed even while a poked run waits to start:
   * that run was asked for before the failure, and a work that skips runs while
   * `delayedPokeWaiting` skips it; without the timer nothing would run after it. (poke(delayMs)
   * adds nothing then: the queued run sees every change, which is right for a debounce.)
   */
  retryAfter(delayMs: number): void {
    if (this.isStopped) return;
    this.delayPoke(delayMs);
  }

  private delayPoke(delayMs: number): void {
    if (this.pokeTimer) return;
    this.pokeTimer = setTimeout(() => {
      this.pokeTimer = null;
      this.poke();
      this.settleIfIdle();
    }, delayMs).unref();
  }

  /** Runs every `intervalMs` (the first one interval from now); 0 = never. */
  every(intervalMs: number): void {
    if (intervalMs <= 0 || this.isStopped) return;
    this.scheduleTimer = setTimeout(() => {
      this.scheduleTimer = null;
      // finally: the schedule goes on whatever the run or its callbacks did.
      void this.inBackground('schedule', () => {}).finally(() => this.every(intervalMs));
    }, intervalMs).unref();
  }

  /** Resolves when no run is queued, running or waiting on a delayed poke (or once stopped). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Ends the schedule and pokes; resolves when the runs already queued have settled. */
  stop(): Promise<void> {
    this.isStopped = true;
    for (const timer of [this.pokeTimer, this.scheduleTimer]) if (timer) clearTimeout(timer);
    this.pokeTimer = this.scheduleTimer = null;
    this.settleIfIdle();
    return this.tail.then(() => {});
  }

  private enqueue(trigger: RunTrigger, onStart: () => void, signal?: AbortSignal, subject?: string): Promise<T> {
    this.inFlight++;
    const result = this.tail.then(() => {
      onStart();
      return this.options.work(trigger, signal, subject);
    });
    this.tail = result.catch(() => {});
    return result;
  }

  /**
   * A run nobody awaits: its outcome goes to the callbacks. Resolves once it is reported, and
   * never rejects — nobody awaits it, so a rejection would be unhandled and end the process.
   * A throwing onResult is reported to onError; a throwing onError has nowhere left to go.
   */
  private inBackground(trigger: RunTrigger, onStart: () => void): Promise<void> {
    const reportError = (error: Error) => {
      if (this.isStopped) return;
      try {
        this.options.onError(error);
      } catch {
        // onError is the last place a background failure can be told; it failed too.
      }
    };
    const reported = this.enqueue(trigger, onStart).then(
      (result) => {
        try {
          this.options.onResult?.(result);
        } catch (error) {
          reportError(error as Error);
        }
      },
      reportError,
    );
    this.settleAfter(reported);
    return reported;
  }

  private settleAfter(settled: Promise<unknown>): void {
    void settled.finally(() => {
      this.inFlight--;
      this.settleIfIdle();
    });
  }

  private isIdle(): boolean {
    return this.isStopped || (this.inFlight === 0 && !this.pokeTimer);
  }

  private settleIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
