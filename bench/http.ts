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
  /** Server memory right after the phase, MiB. */
  rssMb: number;
  peakRssMb: number;
}

export interface HttpResults {
  memories: number;
  seedSeconds: number;
  uwsHello: LoadResult;
  phases: HttpPhase[];
}

const SEED = 42;
const HEALTH_CONNECTIONS = 64;
const WRITE_CONNECTIONS = 64;

export async function runHttp(options: HttpOptions): Promise<HttpResults> {
  const scenarios = new Scenarios(SEED, entityCountFor(options.memories));
  const phases: HttpPhase[] = [];
  const base = { seconds: options.seconds, warmupSeconds: options.warmupSeconds };

  // Ceiling first, on a quiet machine, with the same settings as the health phase.
  const hello = await startUwsHello();
  let uwsHello: LoadResult;
  try {
    uwsHello = await runLoad({ title: 'uws hello-world', url: hello.base, connections: HEALTH_CONNECTIONS, requests: scenarios.health(), ...base });
  } finally {
    await hello.stop();
  }

  const hashDb = join(options.workDir, `http-hash-${options.memories}.db`);
  const seeded = await seedDatabase({ path: hashDb, memories: options.memories, embedder: { id: 'hash-256', dimensions: 256 }, seed: SEED, label: '(hash-256, for HTTP)' });
  const service = await startService({ dbPath: hashDb, embedder: 'hash', dimensions: 256, cpuProfDir: options.cpuProfDir });
  const phase = async (scenario: string, connections: number, requests: Request[], seconds = options.seconds) => {
    const result = await runLoad({ title: `${scenario} [hash]`, url: service.base, connections, requests, seconds, warmupSeconds: options.warmupSeconds });
    phases.push({ ...result, scenario, embedder: 'hash-256', ...service.memory() });
  };
  try {
    await phase('health', HEALTH_CONNECTIONS, scenarios.health());
    // Writes are held twice as long: the figure is a sustained rate, backlog included.
    await phase('remember', WRITE_CONNECTIONS, [scenarios.remember()], options.seconds * 2);
    for (const c of options.levels) await phase('recall', c, [scenarios.recall()]);
    await phase('recall_grouped', 8, [scenarios.recallGrouped()]);
    await phase('episode flow', 16, scenarios.episodeFlow());
    for (const c of options.levels) await phase('mixed', c, scenarios.mixed());
  } finally {
    await service.stop();
  }

  if (options.withUse) await runUsePhases(options, scenarios, phases);
  return { memories: options.memories, seedSeconds: seeded.seconds, uwsHello, phases };
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
      phases.push({ ...result, scenario, embedder: 'use-lite-512', ...service.memory() });
    }
  } finally {
    await service.stop();
  }
}
