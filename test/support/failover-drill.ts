// Load for failover drills (test/postgres-failover.test.ts): writers and recallers against
// service nodes, recording every answer with when it came, so a test can ask what clients saw
// around an event (a primary killed, a standby promoted) and which acknowledged writes the
// database still holds afterwards.
import { get, post } from './service.js';

/** A request unanswered this long counts as no answer (status 0): a hang fails the drill instead of stalling it. */
const NO_ANSWER_MS = 20_000;

export interface Answer {
  node: number;
  /** performance.now() when the answer (or the failure to get one) arrived. */
  at: number;
  /** 0: no HTTP answer (refused, reset). */
  status: number;
  ms: number;
  retryAfter: string | null;
  code?: string;
}

export interface Acknowledged {
  id: string;
  node: number;
  at: number;
}

export class Drill {
  readonly writes: Answer[] = [];
  readonly recalls: Answer[] = [];
  readonly health: { node: number; at: number; status: string }[] = [];
  readonly acknowledged: Acknowledged[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];

  constructor(private readonly bases: string[]) {}

  /** `writers` write loops and one recall loop and one health poll per node. */
  start(writers: number): void {
    this.bases.forEach((base, node) => {
      for (let w = 0; w < writers; w++) this.loops.push(this.writeLoop(base, node, w));
      this.loops.push(this.recallLoop(base, node));
      this.loops.push(this.healthLoop(base, node));
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async writeLoop(base: string, node: number, writer: number): Promise<void> {
    for (let i = 0; this.running; i++) {
      const started = performance.now();
      const answer = await post(base, '/v1/remember', { entity: `drill-${node}-${writer}`, fact: `Drill fact n${node}w${writer}i${i}q` }, {}, AbortSignal.timeout(NO_ANSWER_MS))
        .catch(() => null);
      const at = performance.now();
      const status = answer?.status ?? 0;
      this.writes.push({ node, at, status, ms: at - started, retryAfter: answer?.headers.get('retry-after') ?? null, code: answer?.body?.code });
      if (status === 201) this.acknowledged.push({ id: answer!.body.id, node, at });
      else await pause(50);
    }
  }

  private async recallLoop(base: string, node: number): Promise<void> {
    while (this.running) {
      const started = performance.now();
      const answer = await post(base, '/v1/recall', { query: 'Drill fact', limit: 5 }, {}, AbortSignal.timeout(NO_ANSWER_MS)).catch(() => null);
      const at = performance.now();
      this.recalls.push({ node, at, status: answer?.status ?? 0, ms: at - started, retryAfter: answer?.headers.get('retry-after') ?? null, code: answer?.body?.code });
      await pause(20);
    }
  }

  private async healthLoop(base: string, node: number): Promise<void> {
    while (this.running) {
      const answer = await get(base, '/v1/health').catch(() => null);
      this.health.push({ node, at: performance.now(), status: answer ? String(answer.body?.status ?? answer.status) : 'no answer' });
      await pause(50);
    }
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Counts by key, e.g. statuses. */
export function countBy<T>(items: T[], key: (item: T) => string | number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[String(key(item))] = (counts[String(key(item))] ?? 0) + 1;
  return counts;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
