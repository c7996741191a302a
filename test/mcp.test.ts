// MCP at /mcp, driven by the real SDK client (StreamableHTTPClientTransport) against a real
// service: initialize, tool list, every tool, tool errors, auth, rate limit, DNS-rebinding
// protection, SSE, and state shared with the REST surface.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS } from '../src/shared/operations/index.js';
import { VERSION } from '../src/service.js';
import { del, get, post, startTestService, UUID, type TestService } from './support/service.js';

// Extraction falls back to rules at once when nothing listens (port 9 is discard, never served here).
const OFFLINE_EXTRACTOR = { SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', SERVICE_EXTRACTOR_TIMEOUT_MS: '2000' };

/** Every declared tool and its operation's input schema (the one its REST route validates with). */
const REST_SCHEMAS: Record<string, unknown> = Object.fromEntries(
  Object.values(OPERATIONS).flatMap((op) => (op.mcp ? [[op.mcp.name, op.input]] : [])),
);

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface ClientOptions {
  headers?: Record<string, string>;
  /** Rewrites Accept so the server answers POSTs with an SSE stream. */
  preferSse?: boolean;
}

async function connect(base: string, options: ClientOptions = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: options.headers ?? {} },
    fetch: options.preferSse
      ? (url, init) => {
          const headers = new Headers(init?.headers);
          if (init?.method === 'POST') headers.set('accept', 'text/event-stream, application/json;q=0.5');
          return fetch(url, { ...init, headers });
        }
      : undefined,
  });
  await client.connect(transport);
  return client;
}

function textOf(result: CallToolResult): string {
  assert.equal(result.content.length, 1);
  const [item] = result.content;
  assert.equal(item.type, 'text');
  return (item as { text: string }).text;
}

/** A successful call: text content and structuredContent carry the same JSON. */
async function callOk(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  assert.deepEqual(JSON.parse(textOf(result)), result.structuredContent);
  return result.structuredContent;
}

/** A failed call: isError with the message as text. */
async function callError(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent, undefined);
  return textOf(result);
}

function rawMcp(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

const toolCall = (name: string, args: Record<string, unknown> = {}, id: number | string = 1) => ({
  jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args },
});

describe('MCP over streamable HTTP', () => {
  let t: TestService;
  let client: Client;
  before(async () => {
    t = await startTestService(OFFLINE_EXTRACTOR);
    client = await connect(t.base);
  });
  after(async () => {
    await client?.close();
    await t?.close();
  });

  test('initialize reports the package name and version, tools capability and instructions', () => {
    assert.deepEqual(client.getServerVersion(), { name: 'memory-runtime', version: VERSION });
    assert.ok(client.getServerCapabilities()?.tools);
    assert.equal(typeof client.getInstructions(), 'string');
  });

  test('tools/list: every tool, its input schema the very schema the REST route validates with', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), Object.keys(REST_SCHEMAS).sort());
    for (const tool of tools) {
      assert.deepEqual(tool.inputSchema, JSON.parse(JSON.stringify(REST_SCHEMAS[tool.name])), tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.ok((tool.description ?? '').length > 60, `${tool.name} needs a real description`);
      assert.equal(tool.annotations?.openWorldHint, false);
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // The order agents have always been shown: memories, episodes, entities, status.
    assert.deepEqual(tools.map((tool) => tool.name), [
      'remember', 'recall', 'recall_grouped', 'episode_start', 'episode_message', 'episode_end',
      'forget', 'inspect', 'stats', 'consolidate', 'create_entity', 'forget_memory', 'memory_history', 'remember_batch', 'episode_import',
    ]);
    assert.equal(byName.get('forget_memory')?.annotations?.destructiveHint, true);
    assert.equal(byName.get('recall')?.annotations?.readOnlyHint, true);
    assert.equal(byName.get('forget')?.annotations?.destructiveHint, true);
  });

  test('every tool can be called and answers with the REST shape', async () => {
    const entity = await callOk(client, 'create_entity', { name: 'mcp-bot', kind: 'agent' });
    assert.match(entity.id, UUID);
    assert.deepEqual({ name: entity.name, kind: entity.kind }, { name: 'mcp-bot', kind: 'agent' });

    const stored = await callOk(client, 'remember', { entity: 'mcp-alice', fact: 'Alice keeps bees on her balcony', confidence: 0.9 });
    assert.match(stored.id, UUID);
    assert.equal(stored.memory_type, 'semantic');
    assert.equal(stored.confidence, 0.9);
    assert.equal(typeof stored.extraction_tier, 'number');

    const recalled = await callOk(client, 'recall', { query: 'bees balcony', entity: 'mcp-alice' });
    assert.ok(recalled.memories.some((m: any) => m.id === stored.id));
    assert.ok(Array.isArray(recalled.contradictions));

    const { episode_id } = await callOk(client, 'episode_start', { participants: ['mcp-alice', 'mcp-bot'] });
    assert.match(episode_id, UUID);
    assert.deepEqual(await callOk(client, 'episode_message', { episode_id, role: 'user', content: 'I moved to Porto last spring.' }), { status: 'ok' });
    assert.deepEqual(await callOk(client, 'episode_message', { episode_id, role: 'assistant', content: 'Noted, Porto it is.' }), { status: 'ok' });

    const grouped = await callOk(client, 'recall_grouped', { query: 'Porto', order: 'relevance' });
    assert.ok(Array.isArray(grouped.groups));
    assert.ok(grouped.groups.some((g: any) => g.session_id === episode_id));

    const ended = await callOk(client, 'episode_end', { episode_id, outcome: 'success' });
    assert.equal(typeof ended.memories_created, 'number');

    const inspected = await callOk(client, 'inspect', { entity: 'mcp-alice' });
    assert.equal(inspected.entity, 'mcp-alice');
    assert.ok(inspected.semantic.some((m: any) => m.id === stored.id));
    assert.ok(Array.isArray(inspected.episodic) && Array.isArray(inspected.procedural));

    const stats = await callOk(client, 'stats');
    assert.ok(stats.entities >= 2);
    assert.ok(stats.semantic_memories >= 1);
    assert.deepEqual(stats, (await get(t.base, '/v1/stats')).body, 'same JSON as REST');

    const consolidated = await callOk(client, 'consolidate');
    assert.deepEqual(Object.keys(consolidated).sort(), ['archived', 'decayed', 'promoted']);

    // One memory: its history, then retracted, snapshot first (as over REST).
    const wrong = await callOk(client, 'remember', { entity: 'mcp-retract', fact: 'Retract keeps a pet llama' });
    assert.equal((await callOk(client, 'memory_history', { memory_id: wrong.id })).memory.id, wrong.id);
    const retracted = await callOk(client, 'forget_memory', { memory_id: wrong.id });
    assert.equal(retracted.forgotten_count, 1);
    assert.match(retracted.snapshot.snapshot_id, UUID);
    assert.equal(await callError(client, 'forget_memory', { memory_id: wrong.id }), (await del(t.base, `/v1/memories/${wrong.id}`)).body.error);

    const forgotten = await callOk(client, 'forget', { entity_name: 'mcp-alice' });
    assert.ok(forgotten.forgotten_count >= 1);
    assert.match(forgotten.snapshot.snapshot_id, UUID);
    assert.equal(forgotten.snapshot.owner_only, true);
    // The entity went with its memories: forgetting it again is an unknown entity, as over REST.
    assert.equal(await callError(client, 'forget', { entity_name: 'mcp-alice' }), (await del(t.base, '/v1/entities/mcp-alice')).body.error);
    assert.match(await callError(client, 'inspect', { entity: 'mcp-alice' }), /not found/);
  });

  test('a validation failure is a tool result with isError and the REST message', async () => {
    const cases: Array<[string, Record<string, unknown>, string, Record<string, unknown>]> = [
      ['remember', { entity: 'v', fact: 'x', confidence: 2 }, '/v1/remember', { entity: 'v', fact: 'x', confidence: 2 }],
      ['remember', { entity: 'v' }, '/v1/remember', { entity: 'v' }],
      ['recall', { query: 'x', limit: 0 }, '/v1/recall', { query: 'x', limit: 0 }],
      ['recall_grouped', { query: 'x', order: 'random' }, '/v1/recall_grouped', { query: 'x', order: 'random' }],
      ['create_entity', { name: 'x', kind: 'robot' }, '/v1/entities', { name: 'x', kind: 'robot' }],
      ['episode_start', { participants: 'alice' }, '/v1/episodes/start', { participants: 'alice' }],
      ['remember', { entity: '\ud800', fact: 'x' }, '/v1/remember', { entity: '\ud800', fact: 'x' }],
      ['recall', { query: 'x\udc00' }, '/v1/recall', { query: 'x\udc00' }],
    ];
    for (const [tool, args, path, body] of cases) {
      const message = await callError(client, tool, args);
      const rest = await post(t.base, path, body);
      assert.ok(rest.status === 400 || rest.status === 422, `${path} → ${rest.status}`);
      assert.equal(message, rest.body.error, tool);
    }
    const longName = 'n'.repeat(513);
    assert.equal(await callError(client, 'forget', { entity_name: longName }), (await del(t.base, `/v1/entities/${longName}`)).body.error);
  });

  test('deeply nested arguments are a tool error with the REST message, not an internal error', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const response = await rawMcp(t.base, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember","arguments":{"entity":"a","fact":"b","x":${deep}}}}`);
    assert.equal(response.status, 200);
    const reply = (await response.json()) as { result: CallToolResult };
    assert.equal(reply.result.isError, true);
    const rest = await post(t.base, '/v1/remember', `{"entity":"a","fact":"b","x":${deep}}`);
    assert.equal(rest.status, 422);
    assert.equal(textOf(reply.result), rest.body.error);
  });

  test('an unknown episode is a tool result with isError and the REST message', async () => {
    const episode_id = randomUUID();
    const message = await callError(client, 'episode_message', { episode_id, role: 'user', content: 'hello?' });
    const rest = await post(t.base, '/v1/episodes/message', { episode_id, role: 'user', content: 'hello?' });
    assert.equal(rest.status, 404);
    assert.equal(message, rest.body.error);

    const endMessage = await callError(client, 'episode_end', { episode_id });
    const restEnd = await post(t.base, `/v1/episodes/${episode_id}/end`, {});
    assert.equal(restEnd.status, 404);
    assert.equal(endMessage, restEnd.body.error);

    const inspectMessage = await callError(client, 'inspect', { entity: 'nobody-ever' });
    assert.equal(inspectMessage, (await post(t.base, '/v1/inspect', { entity: 'nobody-ever' })).body.error);
  });

  test('an unknown tool is a protocol error (InvalidParams), not a tool result', async () => {
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (error: unknown) => {
      assert.ok(error instanceof McpError);
      assert.equal(error.code, ErrorCode.InvalidParams);
      return true;
    });
  });

  test('REST and MCP share state: MCP remember → REST recall, REST remember → MCP recall', async () => {
    const viaMcp = await callOk(client, 'remember', { entity: 'shared-sam', fact: 'Sam restores vintage typewriters' });
    const restRecall = await post(t.base, '/v1/recall', { query: 'vintage typewriters', entity: 'shared-sam' });
    assert.equal(restRecall.status, 200);
    assert.ok(restRecall.body.memories.some((m: any) => m.id === viaMcp.id && m.content === 'Sam restores vintage typewriters'));

    const viaRest = await post(t.base, '/v1/remember', { entity: 'shared-sam', fact: 'Sam grows chili peppers in a greenhouse' });
    assert.equal(viaRest.status, 201);
    const mcpRecall = await callOk(client, 'recall', { query: 'chili peppers greenhouse', entity: 'shared-sam' });
    assert.ok(mcpRecall.memories.some((m: any) => m.id === viaRest.body.id));

    // The same read gives the same JSON on both surfaces.
    const restInspect = await post(t.base, '/v1/inspect', { entity: 'shared-sam' });
    assert.deepEqual(await callOk(client, 'inspect', { entity: 'shared-sam' }), restInspect.body);
  });

  test('SSE when the client ranks text/event-stream first; the SDK client works over it', async () => {
    const sseClient = await connect(t.base, { preferSse: true });
    try {
      assert.equal((await sseClient.listTools()).tools.length, Object.keys(REST_SCHEMAS).length);
      const stored = await callOk(sseClient, 'remember', { entity: 'sse-sue', fact: 'Sue collects antique maps' });
      assert.match(stored.id, UUID);
      const bad = { entity: 'sse-sue', fact: 'x', confidence: -1 };
      assert.equal(await callError(sseClient, 'remember', bad), (await post(t.base, '/v1/remember', bad)).body.error);
    } finally {
      await sseClient.close();
    }
    const response = await rawMcp(t.base, toolCall('stats'), { accept: 'application/json;q=0.4, text/event-stream' });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await response.text();
    const data = text.split('\n').find((line) => line.startsWith('data: '));
    assert.ok(data, text);
    assert.equal(JSON.parse(data.slice(6)).result.structuredContent.namespace, 'default');
  });

  test('JSON by default; transport answers (406, 400, 202, 405) pass through the bridge', async () => {
    const json = await rawMcp(t.base, toolCall('stats'));
    assert.equal(json.status, 200);
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await json.json()) as any).result.structuredContent.namespace, 'default');

    const notAcceptable = await rawMcp(t.base, toolCall('stats'), { accept: 'application/json' });
    assert.equal(notAcceptable.status, 406);
    assert.equal(((await notAcceptable.json()) as any).jsonrpc, '2.0');

    const parseError = await rawMcp(t.base, '{"jsonrpc": "2.0", "id": 1,');
    assert.equal(parseError.status, 400);
    assert.equal(((await parseError.json()) as any).error.code, ErrorCode.ParseError);

    const notification = await rawMcp(t.base, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(notification.status, 202);

    for (const method of ['GET', 'DELETE', 'PUT']) {
      const response = await fetch(`${t.base}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST');
      await response.body?.cancel();
    }
  });

  test('a batch of calls is answered in one response', async () => {
    const response = await rawMcp(t.base, [toolCall('stats', {}, 'a'), toolCall('recall', { query: 'typewriters' }, 'b')]);
    assert.equal(response.status, 200);
    const replies = (await response.json()) as Array<{ id: string; result: CallToolResult }>;
    assert.deepEqual(replies.map((reply) => reply.id).sort(), ['a', 'b']);
    assert.ok(replies.every((reply) => reply.result.isError !== true));
  });

  test('the service body limit applies to /mcp (413 before MCP parses anything)', async () => {
    const big = toolCall('remember', { entity: 'big', fact: 'x'.repeat(t.service.config.maxBodyBytes + 10) });
    const response = await rawMcp(t.base, big);
    assert.equal(response.status, 413);
    assert.equal(typeof ((await response.json()) as any).error, 'string');
  });

  test('clients that go away mid-request do not hurt the service', async () => {
    for (const accept of [MCP_HEADERS.accept, 'text/event-stream, application/json;q=0.1']) {
      const controllers = Array.from({ length: 5 }, () => new AbortController());
      const pending = controllers.map((controller, i) =>
        fetch(`${t.base}/mcp`, {
          method: 'POST',
          headers: { ...MCP_HEADERS, accept },
          body: JSON.stringify(toolCall('remember', { entity: 'leaver', fact: `fact number ${i} about leaving` })),
          signal: controller.signal,
        }).then((r) => r.text()).catch(() => 'aborted'),
      );
      for (const controller of controllers) controller.abort();
      await Promise.all(pending);
    }
    // Leave an SSE stream after its headers arrived (the bridge sends them at once).
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const response = await fetch(`${t.base}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, accept: 'text/event-stream, application/json;q=0.1' },
        body: JSON.stringify(toolCall('recall_grouped', { query: 'leaving' })),
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      controller.abort();
      await response.text().catch(() => 'aborted');
    }
    assert.equal((await get(t.base, '/v1/health')).status, 200);
    assert.equal((await callOk(client, 'stats')).namespace, 'default');
  });
});

describe('MCP behind auth and DNS-rebinding protection', () => {
  const KEY = 'mcp-key';
  let t: TestService;
  before(async () => {
    t = await startTestService({
      ...OFFLINE_EXTRACTOR,
      SERVICE_API_KEYS: KEY,
      SERVICE_MCP_ALLOWED_HOSTS: '127.0.0.1',
      SERVICE_MCP_ALLOWED_ORIGINS: 'http://trusted.example',
    });
  });
  after(() => t?.close());

  test('without a valid key: 401 {error} from the shared gate, before MCP runs', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: KEY }] as Array<Record<string, string>>) {
      const response = await rawMcp(t.base, toolCall('stats'), headers);
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      const body = (await response.json()) as any;
      assert.equal(typeof body.error, 'string');
      assert.equal(body.jsonrpc, undefined, 'the REST error shape: MCP never saw the request');
    }
    const refused = await fetch(`${t.base}/mcp`, { method: 'GET' });
    assert.equal(refused.status, 401, 'even methods MCP would refuse are gated first');
  });

  test('the SDK client is refused without a key and works with one', async () => {
    await assert.rejects(connect(t.base), (error: unknown) => {
      assert.ok(error instanceof StreamableHTTPError, String(error));
      assert.equal(error.code, 401);
      return true;
    });
    await assert.rejects(connect(t.base, { headers: { Authorization: 'Bearer nope' } }), (error: unknown) => (error as StreamableHTTPError).code === 401);

    const client = await connect(t.base, { headers: { Authorization: `Bearer ${KEY}` } });
    try {
      assert.equal((await client.listTools()).tools.length, Object.keys(REST_SCHEMAS).length);
      const stored = await callOk(client, 'remember', { entity: 'keyed', fact: 'Keyed requests are welcome' });
      const recall = await post(t.base, '/v1/recall', { query: 'keyed requests welcome' }, { authorization: `Bearer ${KEY}` });
      assert.ok(recall.body.memories.some((m: any) => m.id === stored.id));
    } finally {
      await client.close();
    }
  });

  test('a Host outside SERVICE_MCP_ALLOWED_HOSTS gets 403; an allowed one passes', async () => {
    const port = new URL(t.base).port;
    const send = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify(toolCall('stats'));
        const req = httpRequest(
          { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...MCP_HEADERS, host, authorization: `Bearer ${KEY}`, 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    assert.equal(await send('attacker.example'), 403);
    assert.equal(await send(`attacker.example:${port}`), 403);
    assert.equal(await send(`127.0.0.1:${port}`), 200);
  });

  test('an Origin outside SERVICE_MCP_ALLOWED_ORIGINS gets 403; an allowed or absent one passes', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const evil = await rawMcp(t.base, toolCall('stats'), { ...auth, origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(evil.statusText, 'Forbidden');
    assert.equal(((await evil.json()) as any).jsonrpc, '2.0');
    assert.equal((await rawMcp(t.base, toolCall('stats'), { ...auth, origin: 'http://trusted.example' })).status, 200);
    assert.equal((await rawMcp(t.base, toolCall('stats'), auth)).status, 200);
  });
});

describe('MCP shares the rate limit with REST', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ ...OFFLINE_EXTRACTOR, SERVICE_RATE_LIMIT: '3' });
  });
  after(() => t?.close());

  test('REST and MCP requests draw from the same bucket; over it both get 429', async () => {
    assert.equal((await get(t.base, '/v1/stats')).status, 200);
    assert.equal((await rawMcp(t.base, toolCall('stats'))).status, 200);
    assert.equal((await get(t.base, '/v1/stats')).status, 200);
    const limited = await rawMcp(t.base, toolCall('stats'));
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal(typeof ((await limited.json()) as any).error, 'string');
    assert.equal((await get(t.base, '/v1/stats')).status, 429);
  });
});
