// `npm run bench:import`: bulk writes (issue 26, docs/time.md) against one call per item, in the
// same run, on one service process (SQLite file, hash embedder so embedding does not compete):
// messages/s through POST /v1/episodes/import (one call) beside start + one POST per message +
// end, and facts/s through POST /v1/remember/batch (1,000 a call) beside one POST /v1/remember
// per fact. The goal is ≥ 20× for both. BENCH_IMPORT_ITEMS (default 2000), BENCH_ROUNDS (default 3:
// the two ways alternate, the best round of each is reported), BENCH_CPU_PROF=<dir> (the service
// under node --cpu-prof: one profile per thread, the writer's among them).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from './lib/processes.js';
import { fmt, machine, table } from './lib/report.js';

const ITEMS = Number(process.env.BENCH_IMPORT_ITEMS ?? '2000');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');

async function post(base: string, path: string, body: unknown): Promise<any> {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

const start = Date.parse('2023-05-08T10:00:00Z');
const messages = (round: number) => Array.from({ length: ITEMS }, (_, i) => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `round ${round} turn ${i}: we talked about the ${['garden', 'boat', 'trip', 'budget'][i % 4]} again`,
  occurred_at: new Date(start + i * 60_000).toISOString(),
}));
const facts = (round: number, way: string) => Array.from({ length: ITEMS }, (_, i) => ({
  entity: `bench-${way}-${round}-${i % 50}`, fact: `likes item ${i} of round ${round}`, valid_from: new Date(start + i * 60_000).toISOString(),
}));

/** Items per second of `work` over ITEMS items. */
async function rate(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return ITEMS / ((performance.now() - started) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
const service = await startService({ dbPath: join(dir, 'bench.db'), embedder: 'hash', dimensions: 64, cpuProfDir: process.env.BENCH_CPU_PROF });
try {
  const best = { perMessage: 0, imported: 0, perFact: 0, batched: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const conversation = messages(round);
    best.perMessage = Math.max(best.perMessage, await rate(async () => {
      const { episode_id: id } = await post(service.base, '/v1/episodes/start', { participants: [`per-${round}`, 'bot'], started_at: conversation[0]!.occurred_at });
      for (const m of conversation) await post(service.base, `/v1/episodes/${id}/message`, m);
      await post(service.base, `/v1/episodes/${id}/end`, {});
    }));
    best.imported = Math.max(best.imported, await rate(async () => {
      await post(service.base, '/v1/episodes/import', { participants: [`imp-${round}`, 'bot'], started_at: conversation[0]!.occurred_at, messages: conversation });
    }));
    const single = facts(round, 'single');
    best.perFact = Math.max(best.perFact, await rate(async () => {
      for (const f of single) await post(service.base, '/v1/remember', f);
    }));
    const batch = facts(round, 'batch');
    best.batched = Math.max(best.batched, await rate(async () => {
      for (let i = 0; i < batch.length; i += 1000) await post(service.base, '/v1/remember/batch', { facts: batch.slice(i, i + 1000) });
    }));
  }
  console.log(table(`Bulk writes, ${ITEMS.toLocaleString('en')} items, best of ${ROUNDS} alternating rounds (${machine().cpus})`,
    ['what', 'one call per item (/s)', 'bulk (/s)', 'speed-up'], [
      ['messages (episodes/import)', fmt.rate(best.perMessage), fmt.rate(best.imported), fmt.ratio(best.imported / best.perMessage)],
      ['facts (remember/batch)', fmt.rate(best.perFact), fmt.rate(best.batched), fmt.ratio(best.batched / best.perFact)],
    ]));
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
