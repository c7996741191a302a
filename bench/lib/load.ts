// Drives one load phase with autocannon and summarises it. autocannon's own latency histogram
// has 1 ms resolution, too coarse for sub-millisecond routes, so every response time it
// reports (its 'response' event, in ms with µs precision) is also kept here and the
// percentiles are computed from those exact samples. Errors and non-2xx answers are counted
// separately: a figure with either is not a valid result.
import autocannon from 'autocannon';
import { note } from './progress.js';

export type Request = autocannon.Request;

export interface LoadSpec {
  title: string;
  url: string;
  connections: number;
  seconds: number;
  /** Requests per connection, cycled (see autocannon `requests`). */
  requests: Request[];
  /** Unmeasured run first, so JIT and caches are warm (same settings). */
  warmupSeconds?: number;
}

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  title: string;
  connections: number;
  seconds: number;
  requests: number;
  rps: number;
  latencyMs: LatencySummary;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  firstErrors: string[];
}

export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export function summarise(samples: Float64Array): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

class Samples {
  private data = new Float64Array(1 << 16);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

function fire(spec: LoadSpec, seconds: number, samples: Samples | null, firstErrors: string[]): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: seconds,
        requests: spec.requests,
        timeout: 30,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    if (samples) {
      instance.on('response', (_client, _status, _bytes, responseTime) => samples.push(responseTime));
      let ticks = 0;
      instance.on('tick', () => {
        ticks++;
        if (process.stderr.isTTY) process.stderr.write(`\r[bench] ${spec.title} c=${spec.connections}: ${ticks}/${seconds} s\x1b[K`);
      });
    }
    instance.on('reqError', (error: Error) => {
      if (firstErrors.length < 5) firstErrors.push(String(error?.message ?? error));
    });
  });
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const firstErrors: string[] = [];
  if (spec.warmupSeconds) await fire(spec, spec.warmupSeconds, null, []);
  const samples = new Samples();
  const result = await fire(spec, spec.seconds, samples, firstErrors);
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, (stat as { count: number }).count]));
  const summary: LoadResult = {
    title: spec.title,
    connections: spec.connections,
    seconds: result.duration,
    requests: samples.length,
    rps: samples.length / result.duration,
    latencyMs: summarise(samples.view()),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    firstErrors,
  };
  note(
    `${spec.title} c=${spec.connections}: ${Math.round(summary.rps)} req/s, p50 ${summary.latencyMs.p50.toFixed(2)} ms, ` +
      `p99 ${summary.latencyMs.p99.toFixed(2)} ms, errors ${summary.errors}, non-2xx ${summary.non2xx}` +
      (firstErrors.length ? ` (${firstErrors[0]})` : ''),
  );
  return summary;
}
