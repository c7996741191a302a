// Namespaces are a boundary, not a filter (issue 25): with key A (bound to tenant-a) every REST
// route and every MCP tool is walked against tenant-b's data — the same texts, entity names and
// filler in both, tenant-b's with marker strings besides — and every answer is either a refusal
// (403/404) or tenant-a's own data; no answer body ever holds one of tenant-b's markers. Run with
// the vector index off (every vector in the unassigned cell) and on (IVF cells trained per
// namespace), each in its own test file (its own process), on SQLite and, through scripts/test-postgres.mjs, on PostgreSQL. The walk checks
// that it called every route the service declares, so a new route fails here until it is walked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildRoutes } from '../../src/http/routes.js';
import { MEMORY_TOOLS } from '../../src/http/mcp/tools.js';
import { call, startTestService, type Reply, type TestService } from './service.js';

const OPERATOR = 'op-key-0123456789';
const KEY_A = 'key-a-0123456789';
const KEY_B = 'key-b-0123456789';
const A = 'tenant-a';
const B = 'tenant-b';
/** Words only tenant-b's memories hold: none may ever reach key A. */
const B_MARKERS = ['zebracorn', 'quokkaflux', 'B-SECRET-7731'];
/** Texts both tenants store word for word (de-duplication, FTS and vectors must not cross). */
const SHARED = ['Maria drinks green tea every morning', 'Maria works as a harbour pilot in Lisbon', 'The team meets on Thursdays'];
/** Enough vectors per namespace for SERVICE_VECTOR_INDEX_MIN=64 to train cells in each. */
const FILLER = 70;

const auth = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });

/** The walk, with the vector index off or on (one service per test file: see the files that call it). */
export function tenantIsolationSuite(index: 'off' | 'on'): void {
  describe(`tenant isolation, vector index ${index}`, () => {
    let t: TestService;
    /** Every answer key A received (REST and MCP), checked for tenant-b's markers at the end. */
    const seenByA: string[] = [];
    /** Route patterns the walk called, to check it covers every declared route. */
    const walked = new Set<string>();
    let bEpisode = '';
    let bSnapshot = '';
    let aEpisode = '';
    let bMemory = '';
    const aIds = new Set<string>();

    const as = async (key: string, method: string, path: string, route: string, body?: unknown, extra: Record<string, string> = {}): Promise<Reply> => {
      const reply = await call(t.base, method, path, body, auth(key, extra));
      assert.ok(reply.status < 500, `${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      if (key === KEY_A) {
        seenByA.push(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
        walked.add(`${method} ${route}`);
      }
      return reply;
    };

    before(async () => {
      t = await startTestService({
        SERVICE_API_KEYS: `${OPERATOR},${KEY_A}=${A},${KEY_B}=${B}`,
        SERVICE_API_KEYS_BINDINGS: 'true',
        SERVICE_EMBEDDER: 'hash',
        SERVICE_VECTOR_INDEX_MIN: index === 'on' ? '64' : '1000000000',
        // The shared vector codes on (SQLite): with the index on, recall scans them and their
        // isolation is walked too; with it off, nothing is indexed and no codes task may run.
        SERVICE_VECTOR_CODES_MB: '64',
      });
      for (const [key, marker] of [[KEY_A, ''], [KEY_B, ' zebracorn quokkaflux B-SECRET-7731']] as const) {
        for (const fact of SHARED) {
          const r = await call(t.base, 'POST', '/v1/remember', { entity: 'maria', fact: fact + marker }, auth(key));
          assert.equal(r.status, 201);
          if (key === KEY_A) aIds.add(r.body.id);
        }
        for (let i = 0; i < FILLER; i++) {
          const r = await call(t.base, 'POST', '/v1/remember', { entity: 'garden', fact: `filler note ${i} about the garden hedges${marker}` }, auth(key));
          if (key === KEY_A) aIds.add(r.body.id);
        }
      }
      // tenant-b: an entity tenant-a does not have, an open episode, and a deletion snapshot.
      const bOnly = await call(t.base, 'POST', '/v1/remember', { entity: 'b-only-entity', fact: 'quokkaflux keeps the B-SECRET-7731 code' }, auth(KEY_B));
      assert.equal(bOnly.status, 201);
      bMemory = bOnly.body.id;
      bEpisode = (await call(t.base, 'POST', '/v1/episodes/start', { participants: ['maria', 'assistant'] }, auth(KEY_B))).body.episode_id;
      assert.equal((await call(t.base, 'POST', `/v1/episodes/${bEpisode}/message`, { role: 'user', content: 'my zebracorn password is B-SECRET-7731' }, auth(KEY_B))).status, 200);
      await call(t.base, 'POST', '/v1/remember', { entity: 'doomed', fact: 'zebracorn doomed fact' }, auth(KEY_B));
      const deleted = await call(t.base, 'DELETE', '/v1/entities/doomed', undefined, auth(KEY_B));
      bSnapshot = deleted.body.snapshot.snapshot_id;
      aEpisode = (await call(t.base, 'POST', '/v1/episodes/start', { participants: ['maria', 'assistant'] }, auth(KEY_A))).body.episode_id;
      await t.service.backfill.idle();
      await t.service.vectorIndexer.flush();
    });
    after(() => t?.close());

    test(index === 'on' ? 'each namespace has its own trained cells' : 'no namespace has cells', async () => {
      for (const namespace of [A, B]) {
        const status = await t.service.pool.run({ op: 'vectorIndexStatus', namespace });
        assert.equal(status.vectors, FILLER + SHARED.length + (namespace === B ? 2 : 0), namespace);
        if (index === 'on') assert.ok(status.cells > 0 && status.stale === 0, `${namespace}: ${JSON.stringify(status)}`);
        else assert.equal(status.cells, 0);
      }
    });

    test('key A naming tenant-b in the header is refused on every route and on MCP, whether or not the namespace exists', async () => {
      for (const named of [B, 'no-such-tenant']) {
        const header = { 'memory-namespace': named };
        for (const [method, path, body] of [
          ['POST', '/v1/recall', { query: 'zebracorn' }], ['GET', '/v1/stats', undefined], ['POST', '/v1/inspect', { entity: 'maria' }],
          ['DELETE', '/v1/entities/maria', undefined], ['GET', '/v1/snapshots', undefined], ['POST', '/v1/remember', { entity: 'x', fact: 'y' }],
        ] as const) {
          const r = await call(t.base, method, path, body, auth(KEY_A, header));
          assert.equal(r.status, 403, `${method} ${path}`);
          assert.equal(r.body.code, 'NAMESPACE_FORBIDDEN');
          seenByA.push(JSON.stringify(r.body));
        }
        const mcp = await fetch(`${t.base}/mcp`, {
          method: 'POST', headers: { ...auth(KEY_A, header), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'stats', arguments: {} } }),
        });
        assert.equal(mcp.status, 403);
        seenByA.push(await mcp.text());
      }
      // Naming its own namespace is fine.
      assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, auth(KEY_A, { 'memory-namespace': A }))).body.namespace, A);
      // The refusals created nothing.
      const names = (await call(t.base, 'GET', '/v1/namespaces', undefined, auth(OPERATOR))).body.namespaces.map((n: { namespace: string }) => n.namespace);
      assert.ok(!names.includes('no-such-tenant'), JSON.stringify(names));
    });

    test('every REST route with key A answers tenant-a\'s data or a refusal', async () => {
      await as(KEY_A, 'GET', '/v1/health', '/v1/health');
      for (const query of ['zebracorn quokkaflux', 'Maria green tea', 'B-SECRET-7731 code', 'garden hedges']) {
        const recall = await as(KEY_A, 'POST', '/v1/recall', '/v1/recall', { query, limit: 50 });
        assert.equal(recall.status, 200);
        for (const memory of recall.body.memories) assert.ok(!B_MARKERS.some((m) => memory.content.includes(m)));
        const explained = await as(KEY_A, 'POST', '/v1/recall', '/v1/recall', { query, limit: 50, explain: true });
        assert.equal(explained.status, 200);
        const grouped = await as(KEY_A, 'POST', '/v1/recall_grouped', '/v1/recall_grouped', { query, limit: 50 });
        assert.equal(grouped.status, 200);
      }
      // The same text exists in both: A's recall finds A's copy only (vectors and FTS both).
      const twin = await as(KEY_A, 'POST', '/v1/recall', '/v1/recall', { query: SHARED[1], limit: 200 });
      const twins = twin.body.memories.filter((m: { content: string }) => m.content.startsWith(SHARED[1]));
      assert.equal(twins.length, 1);
      assert.ok(aIds.has(twins[0].id));

      // Remembering a text both tenants hold lands on tenant-a's own copy (de-duplication stays inside the namespace).
      const again = await as(KEY_A, 'POST', '/v1/remember', '/v1/remember', { entity: 'maria', fact: SHARED[0] });
      assert.equal(again.status, 201);
      assert.ok(aIds.has(again.body.id));

      const inspect = await as(KEY_A, 'POST', '/v1/inspect', '/v1/inspect', { entity: 'maria', limit: 1000 });
      assert.equal(inspect.status, 200);
      assert.equal(inspect.body.semantic.length, SHARED.length);
      assert.equal((await as(KEY_A, 'POST', '/v1/inspect', '/v1/inspect', { entity: 'b-only-entity' })).status, 404);

      const stats = await as(KEY_A, 'GET', '/v1/stats', '/v1/stats');
      assert.deepEqual(stats.body, { namespace: A, entities: 3, episodic_memories: 0, semantic_memories: SHARED.length + FILLER, procedural_memories: 0 });

      const entities = await as(KEY_A, 'GET', '/v1/entities?limit=100', '/v1/entities');
      assert.deepEqual(entities.body.entities.map((e: { name: string }) => e.name).sort(), ['assistant', 'garden', 'maria']);

      // The console's episodes view: tenant-a's episode only, though tenant-b's has the same participants.
      for (const query of ['', '?entity=maria', '?entity=assistant&limit=500']) {
        const episodes = await as(KEY_A, 'GET', `/v1/episodes${query}`, '/v1/episodes');
        assert.equal(episodes.status, 200);
        assert.deepEqual(episodes.body.episodes.map((e: { episode_id: string }) => e.episode_id), [aEpisode], query);
        assert.equal(episodes.body.total, 1, query);
      }
      const foreign = await as(KEY_A, 'GET', '/v1/episodes?entity=b-only-entity', '/v1/episodes');
      assert.deepEqual(foreign.body, { episodes: [], total: 0 });

      // Event time stays inside the namespace (issue 26): tenant-b's later fact of the same
      // attribute does not supersede tenant-a's, nor does its history or recall in time reach A.
      const aBerlin = await as(KEY_A, 'POST', '/v1/remember', '/v1/remember', { entity: 'mover', fact: 'Mover lives in Berlin', valid_from: '2020-01-01T00:00:00Z' });
      assert.equal(aBerlin.status, 201);
      const bBatch = await call(t.base, 'POST', '/v1/remember/batch', { facts: [{ entity: 'mover', fact: 'Mover lives in Madrid zebracorn', valid_from: '2022-01-01T00:00:00Z' }] }, auth(KEY_B));
      assert.equal(bBatch.status, 200, JSON.stringify(bBatch.body));
      const bMadrid = bBatch.body.results[0].memory.id as string;
      const aHistory = await as(KEY_A, 'GET', `/v1/memories/${aBerlin.body.id}/history`, '/v1/memories/:memory_id/history');
      assert.equal(aHistory.status, 200);
      assert.equal(aHistory.body.memory.superseded_by, null);
      assert.deepEqual(aHistory.body.chain.map((m: { id: string }) => m.id), [aBerlin.body.id]);
      assert.equal((await as(KEY_A, 'GET', `/v1/memories/${bMadrid}/history`, '/v1/memories/:memory_id/history')).status, 404);
      for (const time of [{ as_of: '2023-01-01T00:00:00Z' }, { include_superseded: true }, { since: '2019-01-01T00:00:00Z', until: '2030-01-01T00:00:00Z' }]) {
        const inTime = await as(KEY_A, 'POST', '/v1/recall', '/v1/recall', { query: 'Mover lives in Madrid zebracorn', limit: 50, ...time });
        assert.equal(inTime.status, 200);
        const mover = inTime.body.memories.filter((m: { content: string }) => m.content.startsWith('Mover'));
        assert.deepEqual(mover.map((m: { id: string; valid_until: string | null }) => [m.id, m.valid_until]), [[aBerlin.body.id, null]], JSON.stringify(time));
        const grouped = await as(KEY_A, 'POST', '/v1/recall_grouped', '/v1/recall_grouped', { query: 'Mover lives zebracorn', limit: 50, ...time });
        assert.equal(grouped.status, 200);
      }
      // A's batch supersedes within A only: its older fact arrives superseded by A's Berlin, never by B's Madrid.
      const aBatch = await as(KEY_A, 'POST', '/v1/remember/batch', '/v1/remember/batch', { facts: [{ entity: 'mover', fact: 'Mover lives in Porto', valid_from: '2019-01-01T00:00:00Z' }] });
      assert.equal(aBatch.status, 200);
      assert.equal(aBatch.body.results[0].memory.superseded_by, aBerlin.body.id);
      const imported = await as(KEY_A, 'POST', '/v1/episodes/import', '/v1/episodes/import', {
        participants: ['mover', 'assistant'], started_at: '2021-03-01T10:00:00Z',
        messages: [{ role: 'user', content: 'I moved to a flat near the station', occurred_at: '2021-03-01T10:00:00Z' }],
      });
      assert.equal(imported.status, 201);
      assert.equal((await call(t.base, 'GET', `/v1/memories/${bMadrid}/history`, undefined, auth(KEY_B))).body.memory.superseded_by, null);
      // A's key cannot retract B's memory; retracting its own leaves B's fact of the same words alone.
      assert.equal((await as(KEY_A, 'DELETE', `/v1/memories/${bMadrid}`, '/v1/memories/:memory_id')).status, 404);
      const retracted = await as(KEY_A, 'DELETE', `/v1/memories/${aBerlin.body.id}`, '/v1/memories/:memory_id');
      assert.equal(retracted.status, 200);
      assert.equal(retracted.body.forgotten_count, 1);
      assert.equal((await call(t.base, 'GET', `/v1/memories/${bMadrid}/history`, undefined, auth(KEY_B))).status, 200);
      // Its snapshot is A's: listed and restorable by A, not by B.
      assert.equal((await call(t.base, 'POST', `/v1/snapshots/${retracted.body.snapshot.snapshot_id}/restore`, undefined, auth(KEY_B))).status, 404);
      assert.equal((await as(KEY_A, 'POST', `/v1/snapshots/${retracted.body.snapshot.snapshot_id}/restore`, '/v1/snapshots/:snapshot_id/restore')).status, 200);
      const back = await as(KEY_A, 'GET', `/v1/memories/${aBerlin.body.id}/history`, '/v1/memories/:memory_id/history');
      assert.equal(back.status, 200);
      assert.notEqual(back.body.memory.superseded_by, bMadrid);

      // tenant-b's episode does not exist for key A.
      assert.equal((await as(KEY_A, 'POST', `/v1/episodes/${bEpisode}/message`, '/v1/episodes/:id/message', { role: 'user', content: 'hello' })).status, 404);
      assert.equal((await as(KEY_A, 'POST', `/v1/episodes/${bEpisode}/end`, '/v1/episodes/:id/end', {})).status, 404);
      assert.equal((await as(KEY_A, 'POST', '/v1/episodes/message', '/v1/episodes/message', { episode_id: bEpisode, role: 'user', content: 'hello' })).status, 404);
      assert.equal((await as(KEY_A, 'POST', '/v1/episodes/end', '/v1/episodes/end', { episode_id: bEpisode })).status, 404);
      // Its own episode works.
      assert.equal((await as(KEY_A, 'POST', `/v1/episodes/${aEpisode}/message`, '/v1/episodes/:id/message', { role: 'user', content: 'Maria asked about the harbour' })).status, 200);
      assert.equal((await as(KEY_A, 'POST', `/v1/episodes/${aEpisode}/end`, '/v1/episodes/:id/end', { outcome: 'success' })).status, 200);
      assert.equal((await as(KEY_A, 'POST', '/v1/episodes/start', '/v1/episodes/start', { participants: ['maria'] })).status, 200);

      // tenant-b's snapshot: neither listed nor restorable (not even named as another namespace's).
      const snapshots = await as(KEY_A, 'GET', '/v1/snapshots', '/v1/snapshots');
      assert.ok(!JSON.stringify(snapshots.body).includes(bSnapshot));
      const restore = await as(KEY_A, 'POST', `/v1/snapshots/${bSnapshot}/restore`, '/v1/snapshots/:snapshot_id/restore');
      assert.equal(restore.status, 404);
      assert.equal(restore.body.code, 'SNAPSHOT_NOT_FOUND');

      assert.equal((await as(KEY_A, 'GET', '/v1/namespaces', '/v1/namespaces')).status, 403);
      assert.equal((await as(KEY_A, 'POST', '/v1/consolidate', '/v1/consolidate')).status, 200);
      assert.equal((await as(KEY_A, 'POST', '/v1/entities', '/v1/entities', { name: 'newcomer' })).status, 201);

      // Deleting an entity tenant-b also has removes tenant-a's only; one only tenant-b has is unknown here.
      assert.equal((await as(KEY_A, 'DELETE', '/v1/entities/b-only-entity', '/v1/entities/:entity_name')).status, 404);
      const forgot = await as(KEY_A, 'DELETE', '/v1/entities/maria', '/v1/entities/:entity_name');
      assert.ok(forgot.body.forgotten_count >= SHARED.length + 1, JSON.stringify(forgot.body));
      const own = await as(KEY_A, 'GET', '/v1/snapshots', '/v1/snapshots');
      assert.ok(own.body.snapshots.some((s: { snapshot_id: string }) => s.snapshot_id === forgot.body.snapshot.snapshot_id));
      assert.equal((await as(KEY_A, 'POST', `/v1/snapshots/${forgot.body.snapshot.snapshot_id}/restore`, '/v1/snapshots/:snapshot_id/restore')).status, 200);

      // tenant-b's data is untouched by all of it.
      const bStats = await call(t.base, 'GET', '/v1/stats', undefined, auth(KEY_B));
      assert.deepEqual(bStats.body, { namespace: B, entities: 5, // maria, assistant, garden, b-only-entity, mover ('doomed' was forgotten)
        episodic_memories: 1, semantic_memories: SHARED.length + FILLER + 2, procedural_memories: 0 });
      const bMaria = await call(t.base, 'POST', '/v1/inspect', { entity: 'maria', limit: 1000 }, auth(KEY_B));
      assert.equal(bMaria.body.semantic.length, SHARED.length);
      // The operator sees both, with their counts, and can act on either by header.
      const listed = (await call(t.base, 'GET', '/v1/namespaces', undefined, auth(OPERATOR))).body.namespaces;
      assert.deepEqual(listed.filter((n: { namespace: string }) => n.namespace === B), [bStats.body]);
      assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, auth(OPERATOR, { 'memory-namespace': B }))).body.semantic_memories, SHARED.length + FILLER + 2);

      // The walk covered every route the service declares (a new one must be added here).
      const declared = buildRoutes().map((route) => `${route.method === 'del' ? 'DELETE' : route.method.toUpperCase()} ${route.path}`);
      const missing = declared.filter((route) => !walked.has(route));
      assert.deepEqual(missing, [], 'routes the isolation walk did not call');
    });

    test('every MCP tool with key A answers tenant-a\'s data or a refusal', async () => {
      const client = new Client({ name: 'isolation', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.base}/mcp`), { requestInit: { headers: auth(KEY_A) } }));
      try {
        const { tools } = await client.listTools();
        const args: Record<string, Record<string, unknown>> = {
          remember: { entity: 'maria', fact: 'Maria keeps bees' },
          recall: { query: 'zebracorn quokkaflux B-SECRET-7731', limit: 50 },
          recall_grouped: { query: 'zebracorn Maria green tea', limit: 50 },
          episode_start: { participants: ['maria'] },
          episode_message: { episode_id: bEpisode, role: 'user', content: 'hi' },
          episode_end: { episode_id: bEpisode },
          episode_import: { participants: ['maria', 'assistant'], messages: [{ role: 'user', content: 'Maria asked about tides' }] },
          remember_batch: { facts: [{ entity: 'maria', fact: 'Maria keeps goats', valid_from: '2021-01-01T00:00:00Z' }] },
          memory_history: { memory_id: bMemory },
          forget_memory: { memory_id: bMemory },
          forget: { entity_name: 'b-only-entity' },
          inspect: { entity: 'b-only-entity' },
          stats: {},
          consolidate: {},
          create_entity: { name: 'maria' },
        };
        for (const tool of tools) {
          assert.ok(args[tool.name], `the walk has arguments for tool ${tool.name}`);
          const result = await client.callTool({ name: tool.name, arguments: args[tool.name] });
          const text = JSON.stringify(result);
          seenByA.push(text);
          if (tool.name === 'stats') assert.equal((result.structuredContent as { namespace: string }).namespace, A);
          if (['episode_message', 'episode_end', 'inspect', 'memory_history', 'forget_memory'].includes(tool.name)) assert.equal(result.isError, true, tool.name);
        }
        assert.equal(tools.length, MEMORY_TOOLS.length);
      } finally {
        await client.close();
      }
    });

    test(index === 'on' ? 'key A\'s recalls were answered through tenant-a\'s own vector codes' : 'no namespace is indexed: no vector codes task ran', async () => {
      const codes = t.service.pool.vectorCodes;
      await codes.settled();
      if (!codes.enabled) return; // PostgreSQL: no shared codes there
      if (index === 'off') {
        assert.equal(codes.refreshes, 0, 'a recall or the upkeep of an unindexed namespace queued a codes task');
        assert.equal(codes.namespaces, 0);
        return;
      }
      assert.ok(codes.peek(A) && codes.peek(B), 'each namespace has its own store');
      const answered = async () => {
        const text = (await call(t.base, 'GET', '/metrics', undefined, auth(OPERATOR))).body as string;
        return Number(/recall_stage_duration_seconds_count\{stage="vector_codes"\} (\d+)/.exec(text)?.[1] ?? 0);
      };
      for (const [i, query] of [SHARED[1], SHARED[0], 'garden hedges', 'zebracorn quokkaflux'].entries()) {
        const before = await answered();
        const recall = await as(KEY_A, 'POST', '/v1/recall', '/v1/recall', { query, limit: 50 });
        assert.equal(recall.status, 200);
        assert.ok(await answered() > before, `recall ${i} did not scan the codes`);
        for (const memory of recall.body.memories) assert.ok(!B_MARKERS.some((m) => memory.content.includes(m)), memory.content);
        if (i === 0) assert.equal(recall.body.memories.filter((m: { content: string }) => m.content.startsWith(SHARED[1])).length, 1);
      }
    });

    test('no answer to key A ever held one of tenant-b\'s markers', () => {
      assert.ok(seenByA.length > 40);
      for (const body of seenByA) for (const marker of B_MARKERS) assert.ok(!body.includes(marker), `${marker} in ${body.slice(0, 300)}`);
    });
  });
}
