// Live stats: the namespace's counts (GET /v1/stats) and request latency from the service's own
// /metrics, scraped every few seconds while this section is shown. Each point of the chart is
// the p50 / p95 of the API requests finished between two scrapes (histogram deltas), so it shows
// latency now rather than since the start; the table gives each route's totals since the start.
import { api } from './api.js';
import { errorBox, h, num, show, svg } from './dom.js';
import { histogramDelta, histogramsByRoute, mergeHistograms, parseSamples, quantile } from './metrics.js';

const EVERY_MS = 3000;
const POINTS = 60;
/** The console's own traffic is not API latency: the scrapes and the static files. */
const isApiRoute = (route) => route !== '/metrics' && !route.startsWith('/console') && route !== '';

export function statsView(root) {
  const counts = h('div', { class: 'tiles', 'aria-live': 'polite' });
  const chart = h('figure', { class: 'chart' });
  const routes = h('div');
  root.append(h('section', { class: 'panel', 'aria-labelledby': 'stats-title' },
    h('h2', { id: 'stats-title' }, 'Live stats'),
    counts,
    h('h3', {}, 'Request latency'),
    chart,
    h('h3', {}, 'By route, since start'),
    routes));

  const series = [];
  let previous = null;
  let timer;
  let stopped = false;

  async function tick() {
    try {
      // One after the other: each scrape then counts the stats call before it, so every
      // interval has at least one API request to plot.
      const stats = await api.stats();
      const text = await api.metrics();
      if (stopped) return;
      show(counts, tiles(stats));
      const byRoute = histogramsByRoute(parseSamples(text), undefined, isApiRoute);
      const total = mergeHistograms(byRoute.values());
      if (previous) {
        const interval = histogramDelta(total, previous);
        series.push({ at: Date.now(), requests: interval.count, p50: quantile(interval, 0.5), p95: quantile(interval, 0.95) });
        if (series.length > POINTS) series.shift();
      }
      previous = total;
      show(chart, latencyChart(series), h('figcaption', {}, caption(series)));
      show(routes, routeTable(byRoute));
    } catch (error) {
      if (!stopped) show(counts, errorBox(error));
    }
    if (!stopped) timer = setTimeout(tick, EVERY_MS);
  }
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function tiles(stats) {
  const tile = (label, value) => h('div', { class: 'tile' }, h('span', { class: 'value' }, String(value)), h('span', { class: 'label' }, label));
  return [
    tile('namespace', stats.namespace), tile('entities', stats.entities), tile('semantic', stats.semantic_memories),
    tile('episodic', stats.episodic_memories), tile('procedural', stats.procedural_memories),
  ];
}

const ms = (seconds) => (seconds === null ? '—' : `${num(seconds * 1000, 2)} ms`);

function caption(series) {
  const last = series[series.length - 1];
  if (!last) return 'Collecting: the first point appears after the next scrape.';
  return `Last ${EVERY_MS / 1000} s: ${last.requests} API requests, p50 ${ms(last.p50)}, p95 ${ms(last.p95)} (from the request duration histogram; values inside a bucket are interpolated).`;
}

/** p50 and p95 lines over the last POINTS intervals, as an SVG the page draws itself. */
function latencyChart(series) {
  const width = 640;
  const height = 180;
  const pad = { left: 56, right: 12, top: 12, bottom: 24 };
  const values = series.flatMap((p) => [p.p50, p.p95]).filter((v) => v !== null);
  const top = Math.max(...values, 0.001) * 1.15;
  const x = (i) => pad.left + (i / Math.max(1, POINTS - 1)) * (width - pad.left - pad.right);
  const y = (v) => pad.top + (1 - v / top) * (height - pad.top - pad.bottom);
  // A line through the points, and a dot on each (a single point is visible too).
  const line = (key) => {
    const points = series.flatMap((p, i) => (p[key] === null ? [] : [[x(i + POINTS - series.length), y(p[key])]]));
    return [
      svg('polyline', { class: `line ${key}`, points: points.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ') }),
      points.map(([px, py]) => svg('circle', { class: `dot ${key}`, cx: px.toFixed(1), cy: py.toFixed(1), r: 2.5 })),
    ];
  };
  const grid = [0, 0.5, 1].map((share) => [
    svg('line', { class: 'grid', x1: pad.left, x2: width - pad.right, y1: y(top * share), y2: y(top * share) }),
    svg('text', { class: 'axis', x: pad.left - 6, y: y(top * share) + 4, 'text-anchor': 'end' }, ms(top * share)),
  ]);
  return svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'API request latency, p50 and p95, per scrape interval' },
    grid,
    line('p95'), line('p50'),
    svg('text', { class: 'legend p95', x: width - pad.right, y: height - 6, 'text-anchor': 'end' }, 'p95'),
    svg('text', { class: 'legend p50', x: width - pad.right - 36, y: height - 6, 'text-anchor': 'end' }, 'p50'));
}

function routeTable(byRoute) {
  const rows = [...byRoute].filter(([, h]) => h.count > 0).sort((a, b) => b[1].count - a[1].count);
  if (rows.length === 0) return h('p', { class: 'muted' }, 'No API requests yet.');
  return h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, ['Route', 'Requests', 'Mean', 'p50', 'p95', 'p99'].map((title, i) => h('th', { scope: 'col', class: i ? 'n' : null }, title)))),
    h('tbody', {}, rows.map(([route, histogram]) => h('tr', {},
      h('td', {}, h('code', {}, route)),
      h('td', { class: 'n' }, String(histogram.count)),
      h('td', { class: 'n' }, ms(histogram.sum / histogram.count)),
      h('td', { class: 'n' }, ms(quantile(histogram, 0.5))),
      h('td', { class: 'n' }, ms(quantile(histogram, 0.95))),
      h('td', { class: 'n' }, ms(quantile(histogram, 0.99)))))));
}
