// HTTP phases against a freshly started service (child process) on a seeded database, and
// the bare uWS hello-world with the same load settings as the ceiling for GET /v1/health.
import { join } from 'node:path';
import { runLoad, type LoadResult, type Request } from './lib/load.js';
import { note } from './lib/progress.js';
import { startService, startUwsHello, type ServerProcess } from './lib/processes.js';
import { Scenarios } from './lib/scenarios.js';
import { entityCountFor, seedDatabase } from './lib/seed.js';

export interface HttpOptions {
  workDir: string;
  /** Memories in the seeded database. */
  memories: number;
  seconds: number;
  warmupSeconds: number;
  /** Concurrency levels for recall and the mixed workload. */
  levels: number[];
  /** Also run recall and the mixed workload with the USE-lite query embedder. */
  withUse: boolean;
  cpuProfDir?: string;
}

export interface HttpPhase extends LoadResult {
  scenario: string;
  embedder: string;
  /** Active memories in the database when the phase ended (GET /v1/stats). */
  memoriesAfter: number;
  /** Server memory right after the phase, MiB. */
  rssMb: number;
  peakRssMb: number;
  rssAnonMb: number;
  rssFileMb: number;
  pssMb: number;
}

export interface HttpResults {
  memories: number;
  seedSeconds: number;
  /** Median round of the alternating health comparison. */
  uwsHello: LoadResult;
  /** Every round's req/s, uWS and service, in order. */
  healthRounds: { uwsRps: number; serviceRps: number }[];
  phases: HttpPhase[];
}

const SEED = 42;
const HEALTH_CONNECTIONS = 64;
const WRITE_CONNECTIONS = 64;
const HEALTH_ROUNDS = 3;

export async function runHttp(options: HttpOptions): Promise<HttpResults> {
  const scenarios = new Scenarios(SEED, entityCountFor(options.memories));
  const phases: HttpPhase[] = [];

  const hashDb = join(options.workDir, `http-hash-${options.memories}.db`);
  const seeded = await seedDatabase({ path: hashDb, memories: options.memories, embedder: { id: 'hash-256', dimensions: 256 }, seed: SEED, label: '(hash-256, for HTTP)' });
  const service = await startService({ dbPath: hashDb, embedder: 'hash', dimensions: 256, cpuProfDir: options.cpuProfDir });
  const phase = async (scenario: string, connections: number, requests: Request[], seconds = options.seconds) => {
    const result = await runLoad({ title: `${scenario} [hash]`, url: service.base, connections, requests, seconds, warmupSeconds: options.warmupSeconds });
    phases.push({ ...result, scenario, embedder: 'hash-256', memoriesAfter: await memoryCount(service.base), ...service.memory() });
  };
  let uwsHello: LoadResult;
  let healthRounds: { uwsRps: number; serviceRps: number }[];
  try {
    const health = await compareWithUws(service, scenarios, options);
    uwsHello = health.uws;
    healthRounds = health.rounds;
    phases.push({ ...health.service, scenario: 'health', embedder: 'hash-256', memoriesAfter: await memoryCount(service.base), ...service.memory() });
    // Reads first: the write phases add tens of thousands of memories, which would make the
    // recall figures those of a bigger database than the one named.
    for (const c of options.levels) await phase('recall', c, [scenarios.recall()]);
    await phase('recall_grouped', 8, [scenarios.recallGrouped()]);
    for (const c of options.levels) await phase('mixed', c, scenarios.mixed());
    await phase('episode flow', 16, scenarios.episodeFlow());
    // Writes are held twice as long: the figure is a sustained rate, backlog included.
    await phase('remember', WRITE_CONNECTIONS, [scenarios.remember()], options.seconds * 2);
  } finally {
    await service.stop();
  }

  if (options.withUse) await runUsePhases(options, scenarios, phases);
  return { memories: options.memories, seedSeconds: seeded.seconds, uwsHello, healthRounds, phases };
}

async function memoryCount(base: string): Promise<number> {
  const stats = (await (await fetch(`${base}/v1/stats`)).json()) as Record<string, number>;
  return stats.episodic_memories + stats.semantic_memories + stats.procedural_memories;
}

/**
 * GET /v1/health against the bare uWS hello-world. On a shared 2-core machine one load phase
 * can land on a busy second and the next on a quiet one, so the two alternate over
 * HEALTH_ROUNDS short rounds and each side reports its median round. Both servers are up
 * the whole time; the idle one costs nothing.
 */
async function compareWithUws(service: ServerProcess, scenarios: Scenarios, options: HttpOptions): Promise<{ uws: LoadResult; service: LoadResult; rounds: { uwsRps: number; serviceRps: number }[] }> {
  const hello = await startUwsHello();
  const rounds: { uws: LoadResult; service: LoadResult }[] = [];
  const seconds = Math.max(2, Math.round(options.seconds / 2));
  try {
    for (let round = 0; round < HEALTH_ROUNDS; round++) {
      const common = { connections: HEALTH_CONNECTIONS, requests: scenarios.health(), seconds, warmupSeconds: round === 0 ? options.warmupSeconds : 0 };
      const uws = await runLoad({ title: `uws hello-world (round ${round + 1})`, url: hello.base, ...common });
      const health = await runLoad({ title: `health [hash] (round ${round + 1})`, url: service.base, ...common });
      rounds.push({ uws, service: health });
    }
  } finally {
    await hello.stop();
  }
  const median = (pick: (r: (typeof rounds)[number]) => LoadResult) => {
    const sorted = rounds.map(pick).sort((a, b) => a.rps - b.rps);
    return sorted[Math.floor(sorted.length / 2)];
  };
  return {
    uws: median((r) => r.uws),
    service: median((r) => r.service),
    rounds: rounds.map((r) => ({ uwsRps: r.uws.rps, serviceRps: r.service.rps })),
  };
}

/**
 * The default embedder. Stored vectors are 512-d stand-ins labelled use-lite-512 (see
 * seed.ts), so the service loads USE-lite and embeds every query for real; new writes are
 * embedded by the backfill with the real model too.
 */
async function runUsePhases(options: HttpOptions, scenarios: Scenarios, phases: HttpPhase[]): Promise<void> {
  const useDb = join(options.workDir, `http-use-${options.memories}.db`);
  await seedDatabase({ path: useDb, memories: options.memories, embedder: { id: 'use-lite-512', dimensions: 512 }, seed: SEED, label: '(512-d stand-ins for USE-lite, for HTTP)' });
  note('starting the service with USE-lite (model load takes a few seconds)');
  const service: ServerProcess = await startService({ dbPath: useDb, embedder: 'use' });
  try {
    for (const [scenario, connections, requests] of [
      ['recall', 1, [scenarios.recall()]],
      ['recall', 8, [scenarios.recall()]],
      ['mixed', 16, scenarios.mixed()],
    ] as const) {
      const result = await runLoad({ title: `${scenario} [use]`, url: service.base, connections, requests: [...requests], seconds: options.seconds, warmupSeconds: options.warmupSeconds });
      phases.push({ ...result, scenario, embedder: 'use-lite-512', memoriesAfter: await memoryCount(service.base), ...service.memory() });
    }
  } finally {
    await service.stop();
  }
}
