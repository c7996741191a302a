// `node dist/bench/codes-variants.js <file.db>`: the shared vector codes' scan, variant by variant,
// on one seeded file (bench:scale keeps its files with BENCH_SCALE_KEEP), read-only. For each
// query the exact top 50 comes from vec0's full scan; then every variant runs on the same query
// in turn (so a variant's time shares the box's load with the others): the share of cells probed
// and the shortlist re-ranked exactly, for this build's int8 scan and, optionally, another
// build's. Reported: share of the exact top 50 found, and mean / p50 ms of the scan and of the
// exact re-rank. (The 1-bit first pass measured in docs/vector-codes.md, 2026-11-27, was removed;
// commit 51b733e holds it and the variants of this bench that ran it.)
// Environment: BENCH_QUERIES (default 30), BENCH_SEED (the corpus seed the file was seeded with,
// default 42), BENCH_SHARES (default 0.2,0.3,0.4,0.5), BENCH_SHORTLISTS (default 100),
// BENCH_BASELINE_DIST=<another build's dist> (its own store and scan as a variant).
import { openDatabase } from '../src/shared/db.js';
import { blobOf } from '../src/shared/meta.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { VectorCells } from '../src/workers/sqlite/ivf-cells.js';
import { refreshVectorCodes } from '../src/workers/sqlite/vector-codes.js';
import { CodesReader } from '../src/workers/ivf/vector-codes.js';
import { probedCells } from '../src/workers/ivf/cells.js';
import { Corpus } from './lib/corpus.js';
import { entityCountFor } from './lib/seed.js';
import { machine } from './lib/report.js';

// Times are CPU ms (the process's CPU time: it runs one thread of work), so that a loaded box's
// waits for a core are not counted; BENCH_WALL=1 keeps the wall clock.
const now = process.env.BENCH_WALL === '1' ? () => performance.now() : () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const path = process.argv[2];
if (!path) throw new Error('usage: node dist/bench/codes-variants.js <file.db>');
const list = (name: string, fallback: string) => (process.env[name]?.trim() || fallback).split(',').map(Number);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 30);
const SEED = Number(process.env.BENCH_SEED ?? 42);
const shares = list('BENCH_SHARES', '0.2,0.3,0.4,0.5');
const baselineDist = process.env.BENCH_BASELINE_DIST?.trim() || null;
const shortlists = list('BENCH_SHORTLISTS', '100');
const DEPTH = 50;
const WARM = 3;

const db = openDatabase(path, { readonly: true });
const memories = db.prepare('SELECT count(*) FROM memories WHERE embedded = 1').pluck().get() as number;
const cells = new VectorCells(db, 1);
const generations = cells.current();
const cellCount = generations.at(-1)?.centroids.count ?? 0;
if (cellCount === 0) throw new Error('the file has no IVF index');
const dimensions = generations[0].centroids.dimensions;
const info = machine();
console.log(`codes variants — ${info.date}, ${path}: ${memories.toLocaleString('en')} vectors, ${dimensions}-d, ${cellCount} cells, ${QUERIES} queries, load ${info.loadAverageAtStart.join(' ')}`);

/** A store's scan: this build's returns a Shortlist, builds before 2026-11-27's afternoon the rowids alone. */
interface Scanner { nearest(query: Float32Array, cells: readonly number[], n: number): number[] | { rowids: number[] } | null }
const stores = new Map<number, Scanner>();
if (baselineDist) {
  // That build's store and scan, on the same file (its layout is its own): variant -1.
  const { refreshVectorCodes: refresh } = await import(`${baselineDist}/src/workers/sqlite/vector-codes.js`);
  const { CodesReader: Reader } = await import(`${baselineDist}/src/workers/ivf/vector-codes.js`);
  const { VectorCells: Cells } = await import(`${baselineDist}/src/workers/sqlite/ivf-cells.js`);
  const built = refresh(db, 1, new Cells(db, 1), null, 2 ** 40, 0);
  stores.set(-1, Reader.attach(built.handle));
  console.log(`baseline store (${baselineDist}): ${(built.bytes / 2 ** 20).toFixed(0)} MiB`);
}
{
  const built = refreshVectorCodes(db, 1, cells, null, 2 ** 40, 0);
  stores.set(0, CodesReader.attach(built.handle!)!);
  console.log(`store: ${(built.bytes / 2 ** 20).toFixed(0)} MiB`);
}
const knn = db.prepare<[Buffer, number], { rowid: number }>('SELECT rowid FROM memory_vectors WHERE embedding MATCH ? AND k = ?');
const rerank = db.prepare<[Buffer, string, number], { rowid: number }>(`SELECT rowid FROM (
    SELECT v.rowid AS rowid, vec_distance_cosine(v.embedding, ?) AS d FROM json_each(?) j CROSS JOIN memory_vectors v ON v.rowid = j.value)
  ORDER BY d LIMIT ?`);

interface Variant { name: string; share: number; build: number; shortlist: number; scan: number[]; rerank: number[]; found: number; inShortlist: number }
const variants: Variant[] = [];
for (const share of shares) {
  for (const shortlist of shortlists) {
    if (baselineDist) variants.push({ name: 'int8 scan, baseline build', share, build: -1, shortlist, scan: [], rerank: [], found: 0, inShortlist: 0 });
    variants.push({ name: 'int8 scan', share, build: 0, shortlist, scan: [], rerank: [], found: 0, inShortlist: 0 });
  }
}

const corpus = new Corpus(SEED, entityCountFor(memories));
for (let i = 0; i < 2000; i++) corpus.next();
const hasher = new HashingEmbedder(dimensions);
let exactMs = 0;
for (let q = 0; q < QUERIES + WARM; q++) {
  const [vector] = await hasher.embed([corpus.query()]);
  let t = performance.now();
  const exact = new Set(knn.all(blobOf(vector), DEPTH).map((r) => r.rowid));
  exactMs += performance.now() - t;
  const record = q >= WARM;
  // A different order each query: no variant always runs on caches the one before warmed.
  const order = variants.map((v, i) => ({ v, key: (i * 7919 + q * 104729) % 1000003 })).sort((a, b) => a.key - b.key).map((x) => x.v);
  for (const v of order) {
    const probes = Math.max(1, Math.ceil(cellCount * v.share));
    t = now();
    const probed = probedCells(generations, vector, probes);
    const scanned = stores.get(v.build)!.nearest(vector, probed, v.shortlist)!;
    const shortlist = Array.isArray(scanned) ? scanned : scanned.rowids;
    const scanMs = now() - t;
    t = now();
    const top = rerank.all(blobOf(vector), JSON.stringify(shortlist), DEPTH);
    const rerankMs = now() - t;
    if (!record) continue;
    v.scan.push(scanMs);
    v.rerank.push(rerankMs);
    v.found += top.filter((r) => exact.has(r.rowid)).length / exact.size / QUERIES;
    v.inShortlist += shortlist.filter((rowid) => exact.has(rowid)).length / exact.size / QUERIES;
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`exact top ${DEPTH} by vec0's full scan: mean ${(exactMs / (QUERIES + WARM)).toFixed(0)} ms`);
console.log('| cells probed | variant | shortlist | exact top 50 found | in shortlist | scan mean / p50 ms | re-rank mean / p50 ms | total mean ms |');
console.log('|---|---|---|---|---|---|---|---|');
for (const v of variants) {
  console.log(`| ${(v.share * 100).toFixed(0)}% (${Math.ceil(cellCount * v.share)}) | ${v.name} | ${v.shortlist} | ${(100 * v.found).toFixed(1)}% | ${(100 * v.inShortlist).toFixed(1)}% | ${mean(v.scan).toFixed(2)} / ${p50(v.scan).toFixed(2)} | ${mean(v.rerank).toFixed(2)} / ${p50(v.rerank).toFixed(2)} | ${(mean(v.scan) + mean(v.rerank)).toFixed(2)} |`);
}
db.close();
