// Reading the service's own /metrics (Prometheus text format 0.0.4) in the browser: the request
// latency histogram per route, and quantiles from it as Prometheus' histogram_quantile computes
// them (linear interpolation inside the bucket). Pure functions: no DOM, tested under Node.

export const LATENCY_METRIC = 'memory_runtime_http_request_duration_seconds';

/** Every sample line as { name, labels, value }; comments and blank lines skipped. */
export function parseSamples(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    samples.push({ name: match[1], labels: parseLabels(match[2] ?? ''), value: Number(match[3]) });
  }
  return samples;
}

function parseLabels(text) {
  const labels = {};
  // Values are quoted, with \" \\ and \n escapes (exposition format).
  for (const match of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/**
 * The histogram `name` summed over every label but `route`: route → { buckets: [[le, count]]
 * (cumulative, ascending, +Inf last), count, sum }. `keep(route)` filters routes.
 */
export function histogramsByRoute(samples, name = LATENCY_METRIC, keep = () => true) {
  const routes = new Map();
  const entry = (route) => {
    if (!routes.has(route)) routes.set(route, { les: new Map(), count: 0, sum: 0 });
    return routes.get(route);
  };
  for (const { name: sampleName, labels, value } of samples) {
    const route = labels.route ?? '';
    if (!keep(route)) continue;
    if (sampleName === `${name}_bucket`) {
      const h = entry(route);
      const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
      h.les.set(le, (h.les.get(le) ?? 0) + value);
    } else if (sampleName === `${name}_count`) entry(route).count += value;
    else if (sampleName === `${name}_sum`) entry(route).sum += value;
  }
  const result = new Map();
  for (const [route, h] of routes) {
    result.set(route, { buckets: [...h.les].sort((a, b) => a[0] - b[0]), count: h.count, sum: h.sum });
  }
  return result;
}

/** All routes' histograms added together (same bucket bounds). */
export function mergeHistograms(histograms) {
  const les = new Map();
  let count = 0;
  let sum = 0;
  for (const h of histograms) {
    for (const [le, n] of h.buckets) les.set(le, (les.get(le) ?? 0) + n);
    count += h.count;
    sum += h.sum;
  }
  return { buckets: [...les].sort((a, b) => a[0] - b[0]), count, sum };
}

/** What happened between two scrapes: `now − before`, bucket by bucket (a restart resets to `now`). */
export function histogramDelta(now, before) {
  if (!before || before.count > now.count) return now;
  const old = new Map(before.buckets);
  return {
    buckets: now.buckets.map(([le, n]) => [le, n - (old.get(le) ?? 0)]),
    count: now.count - before.count,
    sum: now.sum - before.sum,
  };
}

/** The q-quantile (0–1) in seconds, or null with no observations; like histogram_quantile. */
export function quantile(histogram, q) {
  const { buckets } = histogram;
  const total = buckets.length ? buckets[buckets.length - 1][1] : 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [le, cumulative] of buckets) {
    if (cumulative >= rank) {
      // In the +Inf bucket the best answer is the highest finite bound.
      if (le === Infinity) return lowerBound;
      const inBucket = cumulative - lowerCount;
      return inBucket === 0 ? le : lowerBound + (le - lowerBound) * ((rank - lowerCount) / inBucket);
    }
    lowerBound = le;
    lowerCount = cumulative;
  }
  return lowerBound;
}
