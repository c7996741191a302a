// Plain-text tables for stdout and the results folder (git-ignored) for JSON and SVG.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const RESULTS_DIR = fileURLToPath(new URL('../../../bench/results', import.meta.url));

export function table(title: string, header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.every((row) => /^[-\d.,%×x—]*$|^n\/a$/.test(String(row[i] ?? ''))));
  const line = (row: string[]) =>
    row.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd();
  return [`\n${title}`, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export const fmt = {
  ms: (v: number) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)) : 'n/a'),
  us: (ms: number) => (Number.isFinite(ms) ? (ms * 1000 < 10 ? (ms * 1000).toFixed(2) : (ms * 1000).toFixed(1)) : 'n/a'),
  int: (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en') : 'n/a'),
  /** Request rates: one decimal below 10/s, where rounding would hide the figure. */
  rate: (v: number) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString('en')) : 'n/a'),
  ratio: (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a'),
  pct: (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : 'n/a'),
};

/** Where and when a run happened: figures mean little without it. */
export function machine() {
  const cpu = cpus();
  return {
    node: process.version,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverageAtStart: loadavg().map((v) => +v.toFixed(2)),
    date: new Date().toISOString(),
  };
}

export function writeResults(name: string, data: unknown, svg?: string): string[] {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const files = [join(RESULTS_DIR, `${name}-${stamp}.json`), join(RESULTS_DIR, `${name}-latest.json`)];
  for (const file of files) writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  if (svg) {
    const svgFile = join(RESULTS_DIR, `${name}-latest.svg`);
    writeFileSync(svgFile, svg);
    files.push(svgFile);
  }
  return files;
}
