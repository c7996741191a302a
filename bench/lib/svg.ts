// A small hand-written SVG line chart (log-scaled axes): enough for latency percentiles
// against concurrency or dataset size, with no plotting dependency.

export interface Series {
  name: string;
  points: [number, number][];
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
}

const WIDTH = 560;
const HEIGHT = 360;
const M = { left: 64, right: 150, top: 36, bottom: 48 };
const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= min * 0.999 && v <= max * 1.001) ticks.push(v);
    }
  }
  return ticks;
}

const label = (v: number) => (v >= 1000 ? `${v / 1000 >= 1000 ? `${v / 1e6}M` : `${v / 1000}k`}` : String(+v.toPrecision(3)));

/** One chart as an SVG <g> translated to (x, y). */
function panel(chart: Chart, x: number, y: number): string {
  const points = chart.series.flatMap((s) => s.points).filter(([px, py]) => px > 0 && py > 0);
  if (points.length === 0) return `<g transform="translate(${x},${y})"><text x="10" y="20">${esc(chart.title)}: no data</text></g>`;
  const [xMin, xMax] = [Math.min(...points.map((p) => p[0])), Math.max(...points.map((p) => p[0]))];
  const [yMin, yMax] = [Math.min(...points.map((p) => p[1])) / 1.5, Math.max(...points.map((p) => p[1])) * 1.5];
  const w = WIDTH - M.left - M.right;
  const h = HEIGHT - M.top - M.bottom;
  const sx = (v: number) => M.left + (xMax === xMin ? w / 2 : ((Math.log(v) - Math.log(xMin)) / (Math.log(xMax) - Math.log(xMin))) * w);
  const sy = (v: number) => M.top + h - ((Math.log(v) - Math.log(yMin)) / (Math.log(yMax) - Math.log(yMin))) * h;
  const out: string[] = [`<g transform="translate(${x},${y})" font-family="sans-serif" font-size="11">`];
  out.push(`<text x="${M.left}" y="20" font-size="13" font-weight="bold">${esc(chart.title)}</text>`);
  out.push(`<rect x="${M.left}" y="${M.top}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
  for (const t of logTicks(yMin, yMax)) {
    out.push(`<line x1="${M.left}" x2="${M.left + w}" y1="${sy(t)}" y2="${sy(t)}" stroke="#eee"/>`);
    out.push(`<text x="${M.left - 6}" y="${sy(t) + 4}" text-anchor="end">${label(t)}</text>`);
  }
  const xs = [...new Set(points.map((p) => p[0]))].sort((a, b) => a - b);
  for (const t of xs) out.push(`<text x="${sx(t)}" y="${M.top + h + 16}" text-anchor="middle">${label(t)}</text>`);
  out.push(`<text x="${M.left + w / 2}" y="${HEIGHT - 10}" text-anchor="middle">${esc(chart.xLabel)}</text>`);
  out.push(`<text transform="translate(16,${M.top + h / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`);
  chart.series.forEach((series, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const pts = series.points.filter(([px, py]) => px > 0 && py > 0).sort((a, b) => a[0] - b[0]);
    if (pts.length > 0) {
      out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${pts.map(([px, py]) => `${sx(px).toFixed(1)},${sy(py).toFixed(1)}`).join(' ')}"/>`);
      for (const [px, py] of pts) out.push(`<circle cx="${sx(px).toFixed(1)}" cy="${sy(py).toFixed(1)}" r="3" fill="${colour}"><title>${esc(series.name)}: ${py.toFixed(2)} at ${px}</title></circle>`);
    }
    const ly = M.top + 8 + i * 16;
    out.push(`<line x1="${M.left + w + 12}" x2="${M.left + w + 30}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`);
    out.push(`<text x="${M.left + w + 34}" y="${ly + 4}">${esc(series.name)}</text>`);
  });
  out.push('</g>');
  return out.join('\n');
}

/** Charts stacked vertically in one SVG document. */
export function renderCharts(charts: Chart[], caption: string): string {
  const height = charts.length * HEIGHT + 30;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...charts.map((chart, i) => panel(chart, 0, i * HEIGHT)),
    `<text x="8" y="${height - 10}" font-family="sans-serif" font-size="10" fill="#555">${esc(caption)}</text>`,
    '</svg>',
  ].join('\n');
}
