// The Memory-Namespace header under fuzzing (issue 25): case, whitespace, repeated headers,
// unicode, invalid UTF-8, control characters, 10 KB values, empty. Sent as raw bytes (fetch would
// normalise them). Whatever arrives, the answer is a 4xx or the caller's own namespace — never
// another tenant's, never a 5xx — and no read of an unknown namespace creates it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestService, type TestService } from './support/service.js';
import { rawRequest, type RawAnswer } from './support/raw-http.js';

const OPERATOR = 'op-key-fuzz-0001';
const KEY_A = 'key-a-fuzz-0001';
const KEY_B = 'key-b-fuzz-0001';
const MARKER = 'walrusinthevault';

/**
 * One GET /v1/stats or POST /v1/recall with exactly these header lines (raw bytes allowed). null:
 * uWS's HTTP parser refused the request itself and closed the connection, serving nothing (it
 * does so for C0 controls and NUL inside a field value, which HTTP forbids).
 */
/**
 * uWS neither answers nor closes a request whose header value holds a control byte (NUL, 0x01) until
 * its idle timeout (~10 s): such variants are given up after a second, which the checks read as "no
 * answer" (never a leak, never a 5xx). Every other variant waits for its answer.
 */
const hasControlByte = (lines: (string | Buffer)[]) =>
  lines.some((line) => [...Buffer.from(line)].some((byte) => byte < 0x20 && byte !== 0x09));

async function ask(t: TestService, key: string | null, lines: (string | Buffer)[], recall = false): Promise<RawAnswer | null> {
  const port = Number(new URL(t.base).port);
  const body = recall ? JSON.stringify({ query: `${MARKER} secret`, limit: 20 }) : '';
  const head = Buffer.concat([
    Buffer.from(`${recall ? 'POST /v1/recall' : 'GET /v1/stats'} HTTP/1.1\r\nHost: 127.0.0.1\r\n`),
    ...(key ? [Buffer.from(`Authorization: Bearer ${key}\r\n`)] : []),
    ...lines.flatMap((line) => [typeof line === 'string' ? Buffer.from(line, 'utf8') : line, Buffer.from('\r\n')]),
    Buffer.from(recall ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : ''),
    Buffer.from('Connection: close\r\n\r\n'),
    Buffer.from(body),
  ]);
  const exchange = await rawRequest({ port, head, expectAnswers: 1, timeoutMs: hasControlByte(lines) ? 1_000 : undefined });
  if (exchange.answers.length === 0 && exchange.received === '') return null;
  assert.ok(exchange.answers.length === 1, `no whole answer (${exchange.error ?? 'closed'}): ${exchange.received.slice(0, 200)}`);
  return exchange.answers[0]!;
}

const header = (value: string | Buffer, name = 'Memory-Namespace') =>
  Buffer.concat([Buffer.from(`${name}: `), typeof value === 'string' ? Buffer.from(value, 'utf8') : value]);

/**
 * What the service receives of a header value: HTTP's optional whitespace around it removed — and
 * uWS's parser also drops bytes >= 0x80 at either end (a signed-char comparison), so a name that
 * begins or ends with a non-ASCII character cannot be named by this header (docs/tenants.md).
 */
function asDelivered(raw: Buffer): string {
  let start = 0;
  let end = raw.length;
  while (start < end && (raw[start]! <= 0x20 || raw[start]! >= 0x80)) start++;
  while (end > start && (raw[end - 1]! <= 0x20 || raw[end - 1]! >= 0x80)) end--;
  return raw.subarray(start, end).toString('utf8');
}

/** Every header variant the fuzzing sends. */
const VARIANTS: { label: string; lines: Buffer[] }[] = [
  { label: 'other tenant', lines: [header('tenant-b')] },
  { label: 'upper-case name', lines: [header('tenant-b', 'MEMORY-NAMESPACE')] },
  { label: 'mixed-case value', lines: [header('Tenant-B')] },
  { label: 'own, lower-case name', lines: [header('tenant-a', 'memory-namespace')] },
  { label: 'surrounding whitespace', lines: [header('   tenant-b \t ')] },
  { label: 'inner whitespace', lines: [header('tenant -b')] },
  { label: 'repeated, different', lines: [header('tenant-a'), header('tenant-b')] },
  { label: 'repeated, same', lines: [header('tenant-a'), header('tenant-a')] },
  { label: 'repeated, other first', lines: [header('tenant-b'), header('tenant-a')] },
  { label: 'comma-joined', lines: [header('tenant-a, tenant-b')] },
  { label: 'unicode inside', lines: [header('tenant-ä-x')] },
  { label: 'unicode at the end', lines: [header('tenant-bä')] },
  { label: 'emoji inside', lines: [header('team-\u{1F600}-one')] },
  { label: 'homoglyph hyphen', lines: [header('tenant\u2010b')] },
  { label: 'invalid UTF-8', lines: [header(Buffer.from([0x74, 0xff, 0xfe, 0x62]))] },
  { label: 'lone continuation byte', lines: [header(Buffer.from([0x74, 0x2d, 0x80]))] },
  { label: 'control character', lines: [header(Buffer.from('tenant-\u0001b', 'latin1'))] },
  { label: 'NUL', lines: [header(Buffer.from([0x74, 0x00, 0x62]))] },
  { label: 'DEL', lines: [header(Buffer.from([0x74, 0x7f, 0x62]))] },
  { label: '10 KB', lines: [header('b'.repeat(10 * 1024))] },
  { label: '129 characters', lines: [header('x'.repeat(129))] },
  { label: '128 characters', lines: [header('y'.repeat(128))] },
  { label: 'empty', lines: [header('')] },
  { label: 'only spaces', lines: [header('   ')] },
];

describe('Memory-Namespace header fuzzing', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ SERVICE_API_KEYS: `${OPERATOR},${KEY_A}=tenant-a,${KEY_B}=tenant-b`, SERVICE_API_KEYS_BINDINGS: 'true', SERVICE_EMBEDDER: 'hash' });
    assert.equal((await call(t.base, 'POST', '/v1/remember', { entity: 'vault', fact: `the ${MARKER} secret is 4411` }, { authorization: `Bearer ${KEY_B}` })).status, 201);
    assert.equal((await call(t.base, 'POST', '/v1/remember', { entity: 'vault', fact: 'tenant a keeps its own secret' }, { authorization: `Bearer ${KEY_A}` })).status, 201);
    await t.service.backfill.idle();
  });
  after(() => t?.close());

  test('a bound key: every variant is a 4xx or its own namespace, never tenant-b\'s data, never a 5xx', async () => {
    for (const { label, lines } of VARIANTS) {
      for (const recall of [false, true]) {
        const answer = await ask(t, KEY_A, lines, recall);
        if (answer === null) continue;
        assert.ok(answer.status < 500, `${label}: ${answer.status} ${answer.body}`);
        assert.ok(!answer.body.includes(MARKER), `${label}: ${answer.body}`);
        if (answer.status === 200 && !recall) assert.equal(JSON.parse(answer.body).namespace, 'tenant-a', label);
        if (answer.status >= 400) assert.match(JSON.parse(answer.body).code ?? '', /^(NAMESPACE_FORBIDDEN|INVALID_NAMESPACE)$/, `${label}: ${answer.body}`);
      }
    }
    // The expected verdicts of the clear cases.
    const status = async (lines: Buffer[]) => (await ask(t, KEY_A, lines))?.status;
    assert.equal(await status([header('tenant-b')]), 403);
    assert.equal(await status([header('tenant-b', 'MEMORY-NAMESPACE')]), 403);
    assert.equal(await status([header('tenant-a', 'memory-namespace')]), 200);
    assert.equal(await status([header('tenant-a'), header('tenant-b')]), 400);
    assert.equal(await status([header('tenant-a'), header('tenant-a')]), 200);
    assert.equal(await status([header('')]), 400);
    assert.equal(await status([header('x'.repeat(129))]), 400);
    assert.equal(await status([header(Buffer.from([0x74, 0xff, 0xfe, 0x62]))]), 400);
    assert.equal(await status([header('tenant-ä-x')]), 403);
    assert.equal(await status([header(Buffer.from([0x74, 0x7f, 0x62]))]), 400);
  });

  test('an operator key: each variant is a 4xx or exactly the namespace named; reading one creates nothing', async () => {
    for (const { label, lines } of VARIANTS) {
      const answer = await ask(t, OPERATOR, lines);
      if (answer === null) continue;
      assert.ok(answer.status < 500, `${label}: ${answer.status} ${answer.body}`);
      if (answer.status !== 200) continue;
      const { namespace } = JSON.parse(answer.body);
      // What was named, as it arrives (repeated identical headers name it once).
      assert.equal(namespace, asDelivered(lines[0]!.subarray('Memory-Namespace: '.length)), label);
      if (namespace !== 'tenant-b') assert.equal(JSON.parse(answer.body).semantic_memories, namespace === 'tenant-a' ? 1 : 0, label);
    }
    const listed = (await call(t.base, 'GET', '/v1/namespaces', undefined, { authorization: `Bearer ${OPERATOR}` })).body.namespaces;
    assert.deepEqual(listed.map((n: { namespace: string }) => n.namespace).sort(), ['default', 'tenant-a', 'tenant-b']);
  });

  test('MCP takes the same header, with the same verdicts', async () => {
    const tool = async (key: string, value?: string) => fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        ...(value === undefined ? {} : { 'memory-namespace': value }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: { query: `${MARKER} secret` } } }),
    });
    assert.equal((await tool(KEY_A, 'tenant-b')).status, 403);
    assert.equal((await tool(KEY_A, 'x'.repeat(200))).status, 400);
    const own = await tool(KEY_A);
    assert.equal(own.status, 200);
    assert.ok(!(await own.text()).includes(MARKER));
    const operator = await tool(OPERATOR, 'tenant-b');
    assert.ok((await operator.text()).includes(MARKER), 'an operator key acts on the namespace it names');
  });
});

describe('with auth off the header chooses the namespace (single-user mode)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
  });
  after(() => t?.close());

  test('the header names the namespace; without it SERVICE_NAMESPACE serves, as before', async () => {
    assert.equal((await call(t.base, 'POST', '/v1/remember', { entity: 'x', fact: 'in the side namespace' }, { 'memory-namespace': 'side' })).status, 201);
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, { 'memory-namespace': 'side' })).body.semantic_memories, 1);
    assert.deepEqual((await call(t.base, 'GET', '/v1/stats')).body, { namespace: 'default', entities: 0, episodic_memories: 0, semantic_memories: 0, procedural_memories: 0 });
    assert.equal((await call(t.base, 'GET', '/v1/stats', undefined, { 'memory-namespace': '' })).status, 400);
  });
});
