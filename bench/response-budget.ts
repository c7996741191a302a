// `npm run bench:budget`: peak RSS of the service while 16 clients at once ask for maximal
// answers — inspect and recall with limit 1000 over 1000 facts of 100,000 characters, over REST
// and over MCP — with the response budget on (SERVICE_MAX_RESPONSE_BYTES default, 8 MiB) and,
// as the baseline in the same run, effectively off (2 GiB: every memory is sent). Each
// configuration runs in a fresh process on the same seeded database, so VmHWM (peak RSS since
// start) belongs to that configuration alone. BENCH_FACTS (default 1000) sets the corpus size.
// BENCH_BUILDS=label=dir,label=dir runs other builds too (a `dist` folder each, e.g. of the
// commit before a change) against the same database in the same run, for before/after figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const FACTS = Number(process.env.BENCH_FACTS ?? 1000);
const FACT_CHARS = 100_000;
const CONCURRENCY = 16;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Service {
  child: ChildProcess;
  base: string;
}

function start(dbPath: string, env: Record<string, string>, main = MAIN): Promise<Service> {
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: dbPath, SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: 'hash',
      SERVICE_SYNCHRONOUS: 'NORMAL', SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output);
      if (match) resolve({ child, base: `http://127.0.0.1:${match[1]}` });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
}

async function stop(service: Service): Promise<void> {
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  await exited;
}

const statusMb = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function seed(base: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < FACTS) {
      const i = next++;
      const fact = `fact ${i} about the big entity: ` + `word${i} `.repeat(FACT_CHARS).slice(0, FACT_CHARS - 40);
      const r = await fetch(`${base}/v1/remember`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entity: 'big', fact }) });
      if (r.status !== 201) throw new Error(`seed: ${r.status} ${await r.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

type Ask = (base: string) => Promise<number>;
const rest = (path: string, body: unknown): Ask => async (base) => {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await r.arrayBuffer()).byteLength;
};
const mcp = (name: string, args: unknown): Ask => async (base) => {
  const r = await fetch(`${base}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }) });
  return (await r.arrayBuffer()).byteLength;
};

const PHASES: Array<[string, Ask]> = [
  // An answer just under 1 MiB: what an MCP text copy of the JSON costs (sent as text only up to 1 MiB).
  ['MCP inspect 10', mcp('inspect', { entity: 'big', limit: 10 })],
  ['REST inspect', rest('/v1/inspect', { entity: 'big', limit: 1000 })],
  ['REST recall', rest('/v1/recall', { query: 'big entity word1', limit: 1000 })],
  ['MCP inspect', mcp('inspect', { entity: 'big', limit: 1000 })],
  ['MCP recall', mcp('recall', { query: 'big entity word1', limit: 1000 })],
];

const dir = mkdtempSync(join(tmpdir(), 'memrt-budget-'));
const dbPath = join(dir, 'memory.db');
try {
  const seeding = await start(dbPath, {});
  const t0 = performance.now();
  await seed(seeding.base);
  console.log(`seeded ${FACTS} facts of ${FACT_CHARS} chars in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await stop(seeding);
  const builds: Array<[string, string]> = [['this build', MAIN], ...(process.env.BENCH_BUILDS ?? '').split(',').filter(Boolean)
    .map((entry): [string, string] => [entry.split('=')[0], join(entry.slice(entry.indexOf('=') + 1), 'src/main.js')])];
  // Each phase in a fresh process per build, builds side by side: VmHWM is that phase's alone.
  console.log('phase          | configuration          | build      | answer MB (each) | peak RSS MB | RSS MB after');
  // BENCH_BASELINE=0 skips the budget-off baseline (it peaks at several GB).
  const configurations = [['budget off (2 GiB)', String(2 ** 31)], ['budget 8 MiB (default)', '']] as const;
  for (const [label, budget] of configurations.filter(([, budget]) => budget === '' || process.env.BENCH_BASELINE !== '0')) {
    for (const [phase, ask] of PHASES) {
      for (const [build, main] of builds) {
        const service = await start(dbPath, budget ? { SERVICE_MAX_RESPONSE_BYTES: budget } : {}, main);
        const pid = service.child.pid!;
        const sizes = await Promise.all(Array.from({ length: CONCURRENCY }, () => ask(service.base)));
        console.log(`${phase.padEnd(14)} | ${label.padEnd(22)} | ${build.padEnd(10)} | ${(sizes[0] / 2 ** 20).toFixed(1).padStart(16)} | ${statusMb(pid, 'VmHWM').toFixed(0).padStart(11)} | ${statusMb(pid, 'VmRSS').toFixed(0).padStart(12)}`);
        await stop(service);
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
