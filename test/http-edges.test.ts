// HTTP edges the uWS front end must answer honestly: HEAD on GET routes, pipelined requests
// (answered in order or refused — a write is never executed without its answer), the
// service-wide caps on in-flight requests and buffered bodies (503 + Retry-After, whatever the
// source address), and failed authentication limited per address, before any 404/405.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { parseAnswers, rawRequest } from './support/raw-http.js';
import { call, get, post, startTestService, type TestService } from './support/service.js';
import { buildRoutes } from '../src/http/routes.js';
import { STATUS_TEXT } from '../src/shared/errors.js';

const portOf = (t: TestService) => Number(new URL(t.base).port);
const remember = (fact: string) => {
  const body = JSON.stringify({ entity: 'pipe', fact });
  return `POST /v1/remember HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

describe('HEAD and pipelining', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.close());

  test('HEAD on a GET route answers like GET, without a body', async () => {
    // Every GET route of the route table (a path parameter names a stored row), and an operator one (text, not JSON).
    const memoryId = (await post(t.base, '/v1/remember', { entity: 'head', fact: 'Head keeps a ledger' })).body.id;
    const gets = [...buildRoutes().filter((route) => route.method === 'get').map((route) => route.path.replace(':memory_id', memoryId)), '/metrics'];
    assert.ok(gets.length >= 3);
    assert.ok(gets.every((path) => !path.includes(':')), gets.join(' '));
    for (const path of gets) {
      const response = await fetch(t.base + path, { method: 'HEAD' });
      assert.equal(response.status, 200, path);
      assert.equal((await response.arrayBuffer()).byteLength, 0, path);
      assert.ok(response.headers.get('content-type'), path);
    }
  });

  test('every status line carries its reason phrase', async () => {
    const asks: [string, string, string?][] = [
      ['GET', '/v1/health'], ['POST', '/v1/entities', '{"name":"phrase"}'], ['GET', '/no/such/route'],
      ['POST', '/v1/health'], ['POST', '/v1/recall', '{bad'], ['POST', '/v1/recall', '{"query":"q","limit":0}'],
    ];
    const seen = new Set<number>();
    for (const [method, path, body] of asks) {
      const response = await fetch(t.base + path, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
      await response.arrayBuffer();
      seen.add(response.status);
      assert.equal(response.statusText, STATUS_TEXT[response.status], `${method} ${path}`);
    }
    assert.deepEqual([...seen].sort(), [200, 201, 400, 404, 405, 422]);
  });

  test('HEAD elsewhere gets the usual status, still without a body; Allow lists HEAD on GET routes', async () => {
    const missing = await fetch(`${t.base}/no/such/route`, { method: 'HEAD' });
    assert.equal(missing.status, 404);
    assert.equal((await missing.arrayBuffer()).byteLength, 0);
    const wrongMethod = await call(t.base, 'POST', '/v1/health');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
  });

  test('pipelined writes are never executed without their answer', async () => {
    for (let round = 0; round < 5; round++) {
      const before = (await get(t.base, '/v1/stats')).body.semantic_memories;
      const r = await rawRequest({ port: portOf(t), head: remember(`pipelined A${round}`) + remember(`pipelined B${round}`), expectAnswers: 2 });
      const acknowledged = r.answers.filter((a) => a.status === 201).length;
      const stored = (await get(t.base, '/v1/stats')).body.semantic_memories - before;
      assert.equal(stored, acknowledged, `round ${round}: ${stored} stored, ${acknowledged} acknowledged`);
    }
  });

  test('a pipelined delete is never executed without its answer', async () => {
    assert.equal((await post(t.base, '/v1/remember', { entity: 'keep-me', fact: 'still here' })).status, 201);
    const head = 'DELETE /v1/entities/keep-me HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n';
    const r = await rawRequest({ port: portOf(t), head, expectAnswers: 2 });
    const deleted = r.answers.some((a) => a.status === 200 && a.body.includes('deleted'));
    const inspect = await post(t.base, '/v1/inspect', { entity: 'keep-me' });
    assert.equal(inspect.status === 404, deleted, JSON.stringify(r.answers.map((a) => a.status)));
  });

  test('pipelined requests answered at once come back in order', async () => {
    const head = 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\nGET /no/route HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n';
    const r = await rawRequest({ port: portOf(t), head, expectAnswers: 3 });
    assert.deepEqual(r.answers.map((a) => a.status), [200, 404, 200]);
  });
});

/** Opens an upload that declares `length` bytes, sends `sent` of them, then stalls. */
function stalledUpload(port: number, localAddress: string, length: number, sent: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.write(`POST /v1/remember HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 0x20), () => setTimeout(() => resolve(socket), 50));
    });
    socket.on('error', reject);
  });
}

async function eventually<T>(attempt: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let value = await attempt();
  for (let i = 0; i < 50 && !ok(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await attempt();
  }
  return value;
}

describe('service-wide caps, whatever the source address', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ SERVICE_MAX_BODY_BYTES: '1048576', SERVICE_MAX_INFLIGHT_BODY_BYTES: '2097152', SERVICE_MAX_INFLIGHT_REQUESTS: '4' });
  });
  after(() => t.close());

  test('buffered bodies past SERVICE_MAX_INFLIGHT_BODY_BYTES get 503 + Retry-After; room comes back when they end', async () => {
    const uploads = [await stalledUpload(portOf(t), '127.0.0.2', 1_048_576, 1_040_000), await stalledUpload(portOf(t), '127.0.0.3', 1_048_576, 1_040_000)];
    const body = JSON.stringify({ entity: 'caps', fact: 'x'.repeat(99_000) });
    const head = `POST /v1/remember HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const refused = await rawRequest({ port: portOf(t), head: head + body, expectAnswers: 1, localAddress: '127.0.0.4' });
    assert.equal(refused.answers[0].status, 503);
    assert.equal(JSON.parse(refused.answers[0].body).code, 'SERVER_BUSY');
    assert.ok(Number(refused.answers[0].headers['retry-after']) >= 1);
    for (const socket of uploads) socket.destroy();
    const accepted = await eventually(() => post(t.base, '/v1/remember', { entity: 'caps', fact: 'x'.repeat(99_000) }), (r) => r.status === 201);
    assert.equal(accepted.status, 201);
  });

  test('a declared Content-Length alone takes no share of the body budget (header-only uploads cannot starve it)', async () => {
    const uploads = [await stalledUpload(portOf(t), '127.0.0.5', 1_048_576, 0), await stalledUpload(portOf(t), '127.0.0.6', 1_048_576, 0)];
    const accepted = await post(t.base, '/v1/remember', { entity: 'caps', fact: 'x'.repeat(99_000) });
    for (const socket of uploads) socket.destroy();
    assert.equal(accepted.status, 201);
  });

  test('requests past SERVICE_MAX_INFLIGHT_REQUESTS get 503 + Retry-After', async () => {
    const uploads = [];
    for (let i = 0; i < 4; i++) uploads.push(await stalledUpload(portOf(t), `127.0.1.${i + 1}`, 100, 10));
    const refused = await rawRequest({ port: portOf(t), head: 'GET /v1/stats HTTP/1.1\r\nHost: x\r\n\r\n', expectAnswers: 1, localAddress: '127.0.2.1' });
    assert.equal(refused.answers[0].status, 503);
    assert.equal(JSON.parse(refused.answers[0].body).code, 'SERVER_BUSY');
    assert.ok(Number(refused.answers[0].headers['retry-after']) >= 1);
    for (const socket of uploads) socket.destroy();
    assert.equal((await eventually(() => get(t.base, '/v1/stats'), (r) => r.status === 200)).status, 200);
  });
});

describe('failed authentication', () => {
  let t: TestService;
  const good = { authorization: 'Bearer right-key' };
  before(async () => {
    t = await startTestService({ SERVICE_API_KEYS: 'right-key', SERVICE_AUTH_FAILURE_LIMIT: '5' });
  });
  after(() => t.close());

  test('unknown routes and wrong methods answer 401 before 404/405 without a valid key', async () => {
    assert.equal((await get(t.base, '/v1/secret-route')).status, 401);
    assert.equal((await call(t.base, 'PUT', '/v1/health')).status, 401);
    assert.equal((await get(t.base, '/v1/secret-route', good)).status, 404);
    assert.equal((await call(t.base, 'PUT', '/v1/health', undefined, good)).status, 405);
  });

  test('counts against a per-address limit: past it, 429 with Retry-After (the key is not even checked)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await get(t.base, '/v1/health', { authorization: 'Bearer guess' })).status);
    assert.ok(statuses.includes(401));
    assert.equal(statuses.at(-1), 429);
    const blocked = await get(t.base, '/v1/health', good);
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    assert.equal(blocked.body.code, 'RATE_LIMITED');
  });
});

describe('cap configuration', () => {
  test('an in-flight body budget smaller than one body is refused at start, naming the variable', async () => {
    const { ConfigError, loadConfig } = await import('../src/shared/config.js');
    assert.throws(
      () => loadConfig({ SERVICE_MAX_BODY_BYTES: '2000000', SERVICE_MAX_INFLIGHT_BODY_BYTES: '1000000' }),
      (e: unknown) => e instanceof ConfigError && /^SERVICE_MAX_INFLIGHT_BODY_BYTES: /.test(e.message),
    );
    const config = loadConfig({});
    assert.equal(config.maxInflightBodyBytes, 64 * 1024 * 1024);
    assert.equal(config.maxInflightRequests, 1024);
    assert.equal(config.maxResponseBytes, 8 * 1024 * 1024);
  });
});

/** One MCP tools/call over plain HTTP (JSON answer), as the raw JSON-RPC reply. */
async function mcpCall(base: string, name: string, args: unknown): Promise<any> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return JSON.parse(await response.text());
}

describe('response budget (SERVICE_MAX_RESPONSE_BYTES)', () => {
  let t: TestService;
  const FACTS = 30;
  before(async () => {
    t = await startTestService({ SERVICE_MAX_RESPONSE_BYTES: String(1024 * 1024), SERVICE_EMBEDDER: 'hash' });
    for (let i = 0; i < FACTS; i++) {
      assert.equal((await post(t.base, '/v1/remember', { entity: 'big', fact: `fact ${i} ` + 'y'.repeat(90_000) })).status, 201);
    }
  });
  after(() => t.close());

  test('REST: memories past the budget are left out, the shape kept and the answer flagged', async () => {
    const full = await post(t.base, '/v1/inspect', { entity: 'big', limit: 1000 });
    assert.equal(full.status, 200);
    assert.equal(full.headers.get('x-result-truncated'), 'true');
    const kept = full.body.semantic.length;
    assert.ok(kept > 0 && kept < FACTS, `${kept} kept`);
    assert.deepEqual(Object.keys(full.body).sort(), ['contradictions', 'entity', 'episodic', 'procedural', 'semantic']);
    assert.ok(JSON.stringify(full.body).length <= 1024 * 1024 + 4096);
    const small = await post(t.base, '/v1/inspect', { entity: 'big', limit: 3 });
    assert.equal(small.headers.get('x-result-truncated'), null);
    assert.equal(small.body.semantic.length, 3);
    const recall = await post(t.base, '/v1/recall', { query: 'fact', limit: 1000 });
    assert.equal(recall.headers.get('x-result-truncated'), 'true');
    assert.ok(recall.body.memories.length > 0 && recall.body.memories.length < FACTS);
  });

  test('REST: the budget counts content as serialised (JSON escapes included)', async () => {
    for (let i = 0; i < 4; i++) {
      assert.equal((await post(t.base, '/v1/remember', { entity: 'escaped', fact: `escaped ${i} ` + '\u0001'.repeat(90_000) })).status, 201);
    }
    const answer = await post(t.base, '/v1/inspect', { entity: 'escaped', limit: 1000 });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('x-result-truncated'), 'true');
    assert.ok(JSON.stringify(answer.body).length <= 1024 * 1024 + 4096, `${JSON.stringify(answer.body).length} bytes`);
  });

  test('MCP: a cut result up to 1 MiB comes as JSON text too, then a note that it was cut', async () => {
    const reply = await mcpCall(t.base, 'inspect', { entity: 'big', limit: 1000 });
    const structured = reply.result.structuredContent;
    assert.ok(structured.semantic.length > 0 && structured.semantic.length < FACTS);
    assert.equal(reply.result.content.length, 2);
    assert.deepEqual(JSON.parse(reply.result.content[0].text), structured);
    assert.equal(reply.result.content[1].type, 'text');
  });
});

describe('large answers under backpressure', () => {
  let t: TestService;
  // Each fact serialises to ~600 KB (a control character is 6 bytes of JSON): the whole answer,
  // ~24 MB, is far more than the kernel's socket buffers take for a client that does not read.
  const FACTS = 40;
  before(async () => {
    t = await startTestService({ SERVICE_MAX_RESPONSE_BYTES: String(64 * 1024 * 1024), SERVICE_EMBEDDER: 'hash' });
    for (let i = 0; i < FACTS; i++) {
      assert.equal((await post(t.base, '/v1/remember', { entity: 'wide', fact: `wide ${i} ` + '\u0001'.repeat(99_000) })).status, 201);
    }
  });
  after(() => t.close());

  test('REST: a large answer reaches a client that reads slowly whole, with its length, and one that leaves harms nothing', { timeout: 60_000 }, async () => {
    const request = JSON.stringify({ entity: 'wide', limit: 1000 });
    const head = `POST /v1/inspect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${request.length}\r\n\r\n`;
    const { port } = new URL(t.base);
    // Reads nothing for a while, so the socket fills and the service must wait for it to drain.
    const slow = net.connect(Number(port), '127.0.0.1');
    slow.pause();
    slow.write(head + request);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const chunks: Buffer[] = [];
    slow.on('data', (chunk) => {
      chunks.push(chunk);
      const answers = parseAnswers(Buffer.concat(chunks)).answers;
      if (answers.length > 0) slow.end();
    });
    slow.resume();
    await new Promise((resolve) => slow.once('close', resolve));
    const received = Buffer.concat(chunks);
    const [answer] = parseAnswers(received).answers;
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['x-result-truncated'], undefined);
    // Every byte received is the head plus exactly Content-Length bytes: nothing missing or extra.
    const headLength = received.indexOf('\r\n\r\n') + 4;
    assert.equal(received.length, headLength + Number(answer.headers['content-length']));
    assert.equal(JSON.parse(answer.body).semantic.length, FACTS);
    // Leaves after the first bytes of the answer: the service stays up and answers the next one.
    const leaving = net.connect(Number(port), '127.0.0.1');
    leaving.write(head + request);
    await new Promise((resolve) => leaving.once('data', resolve));
    leaving.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await post(t.base, '/v1/inspect', { entity: 'wide', limit: 2 });
    assert.equal(again.status, 200);
    assert.equal(again.body.semantic.length, 2);
  });

  test('MCP: a result of ~600 KB (under 1 MiB) comes as structuredContent and as its JSON text', async () => {
    const reply = await mcpCall(t.base, 'inspect', { entity: 'wide', limit: 1 });
    const text = reply.result.content[0].text;
    assert.ok(text.length > 512 * 1024, `${text.length} characters`);
    assert.deepEqual(JSON.parse(text), reply.result.structuredContent);
    assert.equal(reply.result.content.length, 1);
  });

  test('MCP: the 1 MiB text-copy limit counts bytes: ~450,000 characters of CJK (~1.35 MB) are sent once', async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await post(t.base, '/v1/remember', { entity: 'cjk', fact: `記憶 ${i} ` + '記'.repeat(90_000) })).status, 201);
    }
    const reply = await mcpCall(t.base, 'inspect', { entity: 'cjk', limit: 5 });
    const structured = reply.result.structuredContent;
    assert.equal(structured.semantic.length, 5);
    const json = JSON.stringify(structured);
    assert.ok(json.length < 1024 * 1024 && Buffer.byteLength(json) > 1024 * 1024, 'under 1 Mi characters, over 1 MiB');
    assert.equal(reply.result.content[0].type, 'text');
    assert.ok(reply.result.content[0].text.length < 1000, 'the data is not repeated as text');
  });

  test('MCP: a result over 1 MiB is sent once, as structuredContent', { timeout: 60_000 }, async () => {
    const response = await fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'inspect', arguments: { entity: 'wide', limit: 2 } } }),
    });
    const raw = await response.text();
    const reply = JSON.parse(raw);
    const structured = reply.result.structuredContent;
    assert.equal(structured.semantic.length, 2);
    assert.ok(raw.length < 2 * JSON.stringify(structured).length * 0.6, 'the data is not repeated as text');
    assert.equal(reply.result.content[0].type, 'text');
    assert.ok(reply.result.content[0].text.length < 1000);
  });
});
