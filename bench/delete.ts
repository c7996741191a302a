// `npm run bench:delete`: deleting a large entity must not stall other writes. One database,
// one service process: writers POST /v1/remember in a closed loop, first alone (the baseline),
// then while DELETE /v1/entities/{name} removes an entity of BENCH_DELETE_MEMORIES (default
// 100,000) memories with 512-d vectors. Prints the writes' latency in both phases side by side,
// the delete's duration and its snapshot's size; target: p99 during the delete ≤ 200 ms.
// Then the snapshot is restored online (POST /v1/snapshots/{id}/restore) while the writers run:
// the service's resident memory is sampled every 50 ms, so the restore's extra memory (peak −
// before) can be set beside the snapshot file's size (issue 15 review: it was ~7.5× the file).
// Environment: BENCH_DELETE_MEMORIES, BENCH_DELETE_WRITERS (default 16), BENCH_SECONDS (baseline, default 8).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/shared/db.js';
import { INSERT_VECTOR_SQL, UNASSIGNED_CELL } from '../src/shared/sql-schema.js';
import { blobOf } from '../src/shared/meta.js';
import { HashingEmbedder } from '../src/workers/embedding/hashing.js';
import { note, progress } from './lib/progress.js';
import { fmt, machine, table } from './lib/report.js';
import { seedDatabase } from './lib/seed.js';
import { startService } from './lib/processes.js';

const env = (name: string, fallback: string) => Number(process.env[name]?.trim() || fallback);
const BIG = env('BENCH_DELETE_MEMORIES', '100000');
const WRITERS = env('BENCH_DELETE_WRITERS', '16');
const BASELINE_SECONDS = env('BENCH_SECONDS', '8');
const DIMENSIONS = 512;
const ENTITY = 'big-entity';

/** Adds BIG memories owned by one entity, with vectors, straight into the file. */
async function addBigEntity(path: string): Promise<void> {
  const db = openDatabase(path, { readonly: false, synchronous: 'NORMAL' });
  db.pragma('synchronous = OFF');
  const entityId = randomUUID();
  db.prepare('INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, 1, ?, ?, ?)').run(entityId, ENTITY, 'user', Date.now());
  const memory = db.prepare(`INSERT INTO memories (id, namespace_id, memory_type, content, content_key, confidence, stability,
    difficulty, last_access_at, created_at, extraction_tier, entity_id, embedded, vector_cell)
    VALUES (?, 1, 'semantic', ?, ?, 0.9, 3, 5, ?, ?, 1, ?, 1, ?)`);
  const link = db.prepare("INSERT INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, 'owner')");
  const vector = db.prepare(INSERT_VECTOR_SQL);
  const hasher = new HashingEmbedder(DIMENSIONS);
  const show = progress(`add ${BIG.toLocaleString('en')} memories to ${ENTITY}`, BIG);
  for (let done = 0; done < BIG;) {
    const contents = Array.from({ length: Math.min(5_000, BIG - done) }, (_, i) => `${ENTITY} fact number ${done + i} about topic ${(done + i) % 997}`);
    const vectors = await hasher.embed(contents);
    db.transaction(() => contents.forEach((content, i) => {
      const now = Date.now();
      const rowid = memory.run(randomUUID(), content, content.toLowerCase(), now, now, entityId, UNASSIGNED_CELL).lastInsertRowid;
      link.run(rowid, entityId);
      vector.run(BigInt(rowid), 1n, BigInt(UNASSIGNED_CELL), blobOf(vectors[i]!));
    }))();
    done += contents.length;
    show(done);
  }
  show.done();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

interface Sample { start: number; ms: number; status: number }

/** WRITERS closed-loop remember calls until `stop()` says so. */
function writers(base: string, stop: () => boolean): Promise<Sample[]> {
  const samples: Sample[] = [];
  let n = 0;
  const one = async (w: number): Promise<void> => {
    while (!stop()) {
      const start = performance.now();
      const r = await fetch(`${base}/v1/remember`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ entity: `writer-${w}`, fact: `bench write ${n++} ${randomUUID()}` }),
      });
      await r.arrayBuffer();
      samples.push({ start, ms: performance.now() - start, status: r.status });
    }
  };
  return Promise.all(Array.from({ length: WRITERS }, (_, w) => one(w))).then(() => samples);
}

function summary(samples: Sample[]) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN;
  return { n: ms.length, p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1] ?? NaN, failed: samples.filter((s) => s.status !== 201).length };
}

const info = machine();
const workDir = mkdtempSync(join(tmpdir(), 'memrt-bench-delete-'));
const dbPath = join(workDir, 'memory.db');
try {
  await seedDatabase({ path: dbPath, memories: 2_000, embedder: { id: `hash-${DIMENSIONS}`, dimensions: DIMENSIONS }, label: '(other entities)' });
  await addBigEntity(dbPath);
  // The background IVF training would compete for the CPU with what is measured here.
  const service = await startService({ dbPath, embedder: 'hash', dimensions: DIMENSIONS, env: { SERVICE_VECTOR_INDEX_MIN: '100000000' } });
  // The service's own account of the delete: time to write the snapshot, then to delete.
  let deletedLog: { snapshotMs?: number; deleteMs?: number; commands?: number } = {};
  let pending = '';
  service.child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.includes('"msg":"entity deleted"')) deletedLog = JSON.parse(line);
  });
  try {
    note('warm-up: 3 s of writes (not measured)');
    const warmEnd = performance.now() + 3000;
    await writers(service.base, () => performance.now() > warmEnd);
    note(`baseline: ${WRITERS} writers for ${BASELINE_SECONDS} s, no delete`);
    const baselineEnd = performance.now() + BASELINE_SECONDS * 1000;
    const baseline = summary(await writers(service.base, () => performance.now() > baselineEnd));

    note(`delete ${ENTITY} (${BIG.toLocaleString('en')} memories) while ${WRITERS} writers run`);
    let deleting = true;
    const during = writers(service.base, () => !deleting);
    await new Promise((r) => setTimeout(r, 500));
    const started = performance.now();
    const response = await fetch(`${service.base}/v1/entities/${ENTITY}`, { method: 'DELETE' });
    const body = await response.json() as { forgotten_count: number; snapshot?: { snapshot_id: string; memory_count: number } };
    const deleteSeconds = (performance.now() - started) / 1000;
    deleting = false;
    const writes = (await during).filter((s) => s.start >= started && s.start <= started + deleteSeconds * 1000);
    const duringDelete = summary(writes);
    const snapshotBytes = body.snapshot ? statSync(join(workDir, 'snapshots', `${body.snapshot.snapshot_id}.json`)).size : 0;

    console.log(`\nmemory-runtime delete benchmark — ${info.date}, Node ${info.node}, ${info.cpus} × ${info.cpuModel}, load average at start ${info.loadAverageAtStart.join(' ')}`);
    console.log(table(`POST /v1/remember latency (ms), ${WRITERS} closed-loop writers`, ['phase', 'writes', 'p50', 'p99', 'max', 'non-201'], [
      ['baseline, no delete', fmt.int(baseline.n), fmt.ms(baseline.p50), fmt.ms(baseline.p99), fmt.ms(baseline.max), baseline.failed],
      [`during DELETE of ${BIG.toLocaleString('en')} memories`, fmt.int(duringDelete.n), fmt.ms(duringDelete.p50), fmt.ms(duringDelete.p99), fmt.ms(duringDelete.max), duringDelete.failed],
    ]));
    console.log(`\nDELETE: status ${response.status}, forgotten_count ${body.forgotten_count}, snapshot memory_count ${body.snapshot?.memory_count}, ` +
      `${deleteSeconds.toFixed(1)} s, snapshot file ${(snapshotBytes / 2 ** 20).toFixed(0)} MiB; peak RSS of the service ${fmt.int(service.memory().peakRssMb)} MiB`);
    console.log(`the service's log: snapshot written in ${fmt.int(deletedLog.snapshotMs ?? NaN)} ms, then deleted in ${fmt.int(deletedLog.deleteMs ?? NaN)} ms over ${deletedLog.commands} writer commands`);
    console.log(`target: p99 during the delete ≤ 200 ms → ${duringDelete.p99 <= 200 ? 'met' : 'NOT met'}`);

    if (body.snapshot) {
      note(`restore snapshot ${body.snapshot.snapshot_id} online while ${WRITERS} writers run; memory sampled every 50 ms`);
      await new Promise((r) => setTimeout(r, 2000));
      const before = service.memory();
      const peak = { rssMb: before.rssMb, rssAnonMb: before.rssAnonMb };
      const sampler = setInterval(() => {
        const now = service.memory();
        peak.rssMb = Math.max(peak.rssMb, now.rssMb);
        peak.rssAnonMb = Math.max(peak.rssAnonMb, now.rssAnonMb);
      }, 50);
      let restoring = true;
      const duringRestoreWrites = writers(service.base, () => !restoring);
      const restoreStarted = performance.now();
      const restored = await fetch(`${service.base}/v1/snapshots/${body.snapshot.snapshot_id}/restore`, { method: 'POST' });
      const restoredBody = await restored.json() as { restored_count?: number };
      const restoreSeconds = (performance.now() - restoreStarted) / 1000;
      restoring = false;
      clearInterval(sampler);
      const restoreWrites = summary((await duringRestoreWrites).filter((s) => s.start >= restoreStarted && s.start <= restoreStarted + restoreSeconds * 1000));
      const mib = (mb: number) => `${fmt.int(mb)} MiB`;
      console.log(`\nRESTORE: status ${restored.status}, restored_count ${restoredBody.restored_count}, ${restoreSeconds.toFixed(1)} s; ` +
        `remember during it: p50 ${fmt.ms(restoreWrites.p50)} ms, p99 ${fmt.ms(restoreWrites.p99)} ms, ${restoreWrites.failed} non-201`);
      console.log(`service memory: RSS ${mib(before.rssMb)} before → peak ${mib(peak.rssMb)} (+${mib(peak.rssMb - before.rssMb)}); ` +
        `anonymous ${mib(before.rssAnonMb)} → peak ${mib(peak.rssAnonMb)} (+${mib(peak.rssAnonMb - before.rssAnonMb)}) ` +
        `for a ${(snapshotBytes / 2 ** 20).toFixed(0)} MiB snapshot (extra anonymous memory = ${((peak.rssAnonMb - before.rssAnonMb) / (snapshotBytes / 2 ** 20)).toFixed(2)}× the file)`);
    }
  } finally {
    await service.stop();
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
