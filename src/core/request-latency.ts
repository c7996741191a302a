// The HTTP request-latency histogram (`…http_request_duration_seconds`), kept here rather than
// in a prom-client Histogram: prom-client's observe() copies the labels into a new object,
// validates them and hashes them into a string key on every call — ~8% of the main thread's
// JavaScript time under `GET /v1/health` load (CPU profile, bench:mixed). Here a request finds
// its series through three Map lookups on values the server already holds (the route pattern
// and method strings are fixed, the status a small number) and bumps one bucket. It registers
// in the service's Registry like any metric and exposes prom-client's own shape, so /metrics
// prints the same series and the request counter can still be derived from its _count.
import type { Registry } from 'prom-client';

interface Series {
  labels: { method: string; route: string; status: number };
  /** Observations per bucket, not cumulative; the last slot is above every bound (+Inf only). */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class RequestLatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** route → method → status → series. */
  private series = new Map<string, Map<string, Map<number, Series>>>();
  /** The same series in first-seen order, the order prom-client prints them in. */
  private ordered: Series[] = [];

  constructor(readonly name: string, readonly help: string, private readonly bounds: readonly number[], registry: Registry) {
    // prom-client accepts any object with its metric interface (name, help, type, get, reset).
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    // prom-client refuses NaN and infinities; one would turn _sum into NaN for good.
    if (!(seconds >= 0 && seconds < Infinity)) return;
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = { labels: { method, route, status }, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.ordered.push(series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  /** prom-client's histogram shape and label order: per series, cumulative buckets by `le`, then +Inf, _sum, _count. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, counts, sum, count } of this.ordered) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i];
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...labels }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Requests per label set, read synchronously so a scrape can copy them without yielding. */
  counts(): { labels: Series['labels']; count: number }[] {
    return this.ordered.map(({ labels, count }) => ({ labels, count }));
  }

  reset(): void {
    this.series = new Map();
    this.ordered = [];
  }
}
