// Fuzzing every REST route and every MCP tool (from the service's own OpenAPI document and
// tools/list) against a real service process: no request may get a 5xx, go unanswered or
// crash the process, and data written before must be intact after.
// FUZZ_SEED (default 13), FUZZ_CASES (default 4,000 here; `npm run test:fuzz` runs 10,000)
// and FUZZ_SECONDS (default 50: the suite's time bound; the cases stop early when it is up).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { RequestFuzzer, type FuzzCase } from './support/fuzz.js';
import { exited, spawnService } from './support/process.js';
import { del, get, post, tempDir } from './support/service.js';
import { VECTOR_ENV } from './support/cli.js';

const SEED = Number(process.env.FUZZ_SEED ?? 13);
const CASES = Number(process.env.FUZZ_CASES ?? 4_000);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 50);
const CONCURRENCY = 8;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Outcome { c: FuzzCase; status: number; body: string }

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** node:http rather than fetch: fetch refuses a body on GET, which real clients do send. */
function send(base: string, c: FuzzCase): Promise<Outcome> {
  return new Promise((resolve) => {
    const body = c.body === undefined ? undefined : Buffer.from(c.body);
    const req = request(base + c.path, {
      method: c.method, agent, timeout: 20_000,
      headers: { ...c.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ c, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString().slice(0, 300) }));
      res.on('error', (error) => resolve({ c, status: 0, body: String(error) }));
    });
    // No answer at all (a dropped connection, a hang, a crash) is status 0.
    req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', (error) => resolve({ c, status: 0, body: String(error) }));
    req.end(body);
  });
}

test(`fuzz: ${CASES} seeded cases (seed ${SEED}) over every route and /mcp — no 5xx, no crash, data intact`, async () => {
  const dir = tempDir('memrt-fuzz-');
  const service = await spawnService({ SERVICE_PATH: join(dir, 'memory.db'), ...VECTOR_ENV });
  try {
    // Data the fuzzer cannot name (its strings never contain this marker), checked at the end.
    const sentinel = `sentinel-${process.pid}-${Date.now()}`;
    const kept = [];
    for (let i = 0; i < 5; i++) kept.push((await post(service.base, '/v1/remember', { entity: sentinel, fact: `kept fact ${i}` })).body);
    const episodes: string[] = [];
    for (let i = 0; i < 3; i++) episodes.push((await post(service.base, '/v1/episodes/start', { participants: ['fuzz 1 alice'] })).body.episode_id);

    // A real deletion snapshot, so restore is fuzzed with an id that exists too.
    await post(service.base, '/v1/remember', { entity: 'fuzz deleted', fact: 'a fact to restore' });
    episodes.push((await del(service.base, '/v1/entities/fuzz%20deleted')).body.snapshot.snapshot_id);
    const openapi = (await get(service.base, '/v1/openapi.json')).body;
    const listed = await fetch(`${service.base}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    const tools = ((await listed.json()) as { result: { tools: { name: string; inputSchema: Record<string, unknown> }[] } }).result.tools;
    assert.ok(Object.keys(openapi.paths).length >= 10 && tools.length >= 8, 'routes and tools were enumerated');

    const fuzzer = new RequestFuzzer(SEED, openapi, tools, episodes);
    const deadline = performance.now() + SECONDS * 1000;
    const failures: Outcome[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    const worker = async () => {
      while (sent < CASES && performance.now() < deadline) {
        sent++;
        const outcome = await send(service.base, fuzzer.next());
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        if (outcome.status === 0 || outcome.status >= 500) failures.push(outcome);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    console.log(`fuzz seed ${SEED}: ${sent} cases; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);

    const report = failures.slice(0, 10).map((f) => `${f.status} ${f.c.method} ${f.c.path.slice(0, 80)} [${f.c.mutation}] ${f.c.body?.slice(0, 120)} → ${f.body}`);
    assert.deepEqual(report, [], `${failures.length} requests answered 5xx or not at all`);
    assert.equal(service.child.exitCode, null, 'the process is alive');
    assert.ok(sent >= Math.min(CASES, 200), `ran ${sent} cases`);

    assert.equal((await get(service.base, '/v1/health')).status, 200);
    const inspect = await post(service.base, '/v1/inspect', { entity: sentinel });
    assert.deepEqual(inspect.body.semantic.map((m: { id: string; content: string }) => [m.id, m.content]).sort(),
      kept.map((m) => [m.id, m.content]).sort());
    assert.equal((await post(service.base, '/v1/remember', { entity: sentinel, fact: 'still writable' })).status, 201);
  } finally {
    agent.destroy();
    service.child.kill('SIGKILL');
    await exited(service.child);
  }
});
