// The Memory-Position contract over the API, on the backend of the run (SQLite by default; a
// primary + replica under scripts/test-postgres.mjs): every write answers the WAL position of its
// commit on PostgreSQL and none on SQLite; recall and recall_grouped accept a valid position and
// refuse a malformed one (REST 400, MCP tool error) on PostgreSQL, and ignore either on SQLite,
// where it means nothing; MCP carries it in `_meta`; the client keeps the furthest it saw, sends
// it with its recalls, and forgets it when told to. That a position really sends a
// recall past a stale replica is shown in test/postgres-read-your-writes.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryClient } from '../src/client/index.js';
import { compareWalPositions, POSITION_META_KEY as META_KEY, WAL_POSITION_PATTERN } from '../src/shared/wal-position.js';
import { mcpCall as mcpOn } from './support/mcp.js';
import { del, groupedIds, post, startTestService, type Reply, type TestService } from './support/service.js';
import { onPostgres } from './support/test-backend.js';

const POSITION = new RegExp(WAL_POSITION_PATTERN);

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(() => t.close());

const positionOf = (reply: Reply) => reply.headers.get('memory-position');

const mcpCall = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => mcpOn(t.base, name, args, meta);

test(`every write answers its commit position ${onPostgres ? '(PostgreSQL: each, in commit order)' : '(SQLite: none)'}`, async () => {
  const writes: [string, Reply][] = [];
  const write = async (name: string, reply: Promise<Reply>) => {
    const answered = await reply;
    assert.ok(answered.status < 300, `${name}: ${answered.status} ${JSON.stringify(answered.body)}`);
    writes.push([name, answered]);
    return answered.body;
  };
  await write('createEntity', post(t.base, '/v1/entities', { name: 'pos-user', kind: 'user' }));
  await write('remember', post(t.base, '/v1/remember', { entity: 'pos-user', fact: 'Pos user likes lighthouses' }));
  const { episode_id: episode } = await write('startEpisode', post(t.base, '/v1/episodes/start', { participants: ['pos-user'] }));
  await write('addMessage', post(t.base, `/v1/episodes/${episode}/message`, { role: 'user', content: 'I moved to Porto last year' }));
  await write('endEpisode', post(t.base, `/v1/episodes/${episode}/end`, {}));
  await write('consolidate', post(t.base, '/v1/consolidate'));
  const { snapshot } = await write('forget', del(t.base, '/v1/entities/pos-user'));
  await write('restoreSnapshot', post(t.base, `/v1/snapshots/${snapshot.snapshot_id}/restore`));

  if (!onPostgres) {
    for (const [name, reply] of writes) assert.equal(positionOf(reply), null, `${name}: SQLite names no position`);
    return;
  }
  let previous = '0/0';
  for (const [name, reply] of writes) {
    const position = positionOf(reply) ?? '';
    assert.match(position, POSITION, `${name} names its commit position`);
    assert.ok(compareWalPositions(position, previous) >= 0, `${name}: ${position} is not behind the write before it (${previous})`);
    previous = position;
  }
  // Reads name none: the header is a write's.
  assert.equal(positionOf(await post(t.base, '/v1/recall', { query: 'lighthouses' })), null);
});

test('recall and recall_grouped accept a valid position, a write\'s or any other', async () => {
  const stored = await post(t.base, '/v1/remember', { entity: 'pos-reader', fact: 'Pos reader collects windmills' });
  // SQLite ignores the header; PostgreSQL: the write's own position, and one past the primary's
  // own (served by the primary at once).
  for (const position of [positionOf(stored) ?? '0/0', 'ffffffff/0']) {
    for (const path of ['/v1/recall', '/v1/recall_grouped']) {
      const r = await post(t.base, path, { query: 'windmills', entity: 'pos-reader' }, { 'memory-position': position });
      assert.equal(r.status, 200, `${path} ${position}: ${JSON.stringify(r.body)}`);
      const ids = path === '/v1/recall' ? r.body.memories.map((m: { id: string }) => m.id) : groupedIds(r.body);
      assert.deepEqual(ids, [stored.body.id]);
    }
  }
});

const MALFORMED = ['nope', '0', '0/', '/0', '0/1/2', 'G/0', '123456789/0', '-1/0', 'primary'];

test('a malformed position is refused, naming where it was: REST 400 INVALID_VALUE, MCP a tool error (PostgreSQL)', { skip: !onPostgres && 'SQLite ignores the position' }, async () => {
  for (const bad of MALFORMED) {
    for (const path of ['/v1/recall', '/v1/recall_grouped']) {
      const r = await post(t.base, path, { query: 'windmills' }, { 'memory-position': bad });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(bad)}`);
      assert.equal(r.body.code, 'INVALID_VALUE');
      assert.match(r.body.error, /^Memory-Position: /);
    }
    for (const tool of ['recall', 'recall_grouped']) {
      const result = await mcpCall(tool, { query: 'windmills' }, { [META_KEY]: bad });
      assert.equal(result.isError, true, `${tool} ${JSON.stringify(bad)}`);
      assert.match(result.content[0].text, /^_meta\["memory-runtime\/position"\]: /);
    }
  }
  // Not a string at all.
  const numeric = await mcpCall('recall', { query: 'windmills' }, { [META_KEY]: 42 });
  assert.equal(numeric.isError, true);
  // Routes that read no position ignore the header, as any unknown header.
  assert.equal((await post(t.base, '/v1/inspect', { entity: 'pos-reader' }, { 'memory-position': 'nope' })).status, 200);
});

test('SQLite ignores a position, malformed or not: the recall answers as without it', { skip: onPostgres && 'PostgreSQL validates the position' }, async () => {
  const stored = await post(t.base, '/v1/remember', { entity: 'pos-ignored', fact: 'Pos ignored keeps owls' });
  for (const bad of [...MALFORMED, 'ffffffff/ffffffff']) {
    for (const path of ['/v1/recall', '/v1/recall_grouped']) {
      const r = await post(t.base, path, { query: 'owls', entity: 'pos-ignored' }, { 'memory-position': bad });
      assert.equal(r.status, 200, `${path} ${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(path === '/v1/recall' ? r.body.memories.map((m: { id: string }) => m.id) : groupedIds(r.body), [stored.body.id]);
    }
    for (const tool of ['recall', 'recall_grouped']) {
      const result = await mcpCall(tool, { query: 'owls', entity: 'pos-ignored' }, { [META_KEY]: bad });
      assert.notEqual(result.isError, true, `${tool} ${JSON.stringify(bad)}: ${JSON.stringify(result.content)}`);
    }
  }
  assert.notEqual((await mcpCall('recall', { query: 'owls' }, { [META_KEY]: 42 })).isError, true);
});

test(`MCP: a write tool's result carries its position in _meta${onPostgres ? '' : ' (none on SQLite)'}; a recall tool takes it`, async () => {
  const stored = await mcpCall('remember', { entity: 'pos-agent', fact: 'Pos agent prefers tea' });
  assert.notEqual(stored.isError, true);
  const position = stored._meta?.[META_KEY];
  if (onPostgres) assert.match(position, POSITION);
  else assert.equal(stored._meta, undefined);
  const recalled = await mcpCall('recall', { query: 'tea', entity: 'pos-agent' }, { [META_KEY]: position ?? '0/0' });
  assert.notEqual(recalled.isError, true);
  assert.deepEqual(recalled.structuredContent.memories.map((m: { id: string }) => m.id), [stored.structuredContent.id]);
  assert.equal(recalled._meta, undefined, 'a read names no position');
});

test('the client keeps the furthest position it was answered and sends it with recalls only', async () => {
  const sent: { path: string; position: string | null }[] = [];
  // The real fetch, watched: what the client put on each request.
  const watched = (url: string | URL | Request, init?: RequestInit) => {
    sent.push({ path: new URL(String(url)).pathname, position: new Headers(init?.headers).get('memory-position') });
    return fetch(url, init);
  };
  const client = new MemoryClient({ baseUrl: t.base, fetch: watched });
  assert.equal(client.position, undefined);
  await client.recall({ query: 'anything' });
  const first = await post(t.base, '/v1/remember', { entity: 'pos-client', fact: 'Pos client rides a bicycle' });
  await client.remember({ entity: 'pos-client', fact: 'Pos client rides a bicycle' });
  if (onPostgres) {
    assert.match(client.position ?? '', POSITION);
    assert.ok(compareWalPositions(client.position!, positionOf(first)!) >= 0);
  } else {
    assert.equal(client.position, undefined, 'SQLite answers no position');
  }
  const remembered = client.position;
  await client.recall({ query: 'bicycle' });
  await client.recallGrouped({ query: 'bicycle' });
  await client.stats();
  assert.deepEqual(sent.map((s) => [s.path, s.position]), [
    ['/v1/recall', null], ['/v1/remember', null], ['/v1/recall', remembered ?? null], ['/v1/recall_grouped', remembered ?? null], ['/v1/stats', null],
  ]);

  // Furthest, not latest: a position handed over that is ahead of every answer stays.
  const ahead = new MemoryClient({ baseUrl: t.base, fetch: watched, position: 'FFFFFFFF/0' });
  await ahead.remember({ entity: 'pos-client', fact: 'Pos client rides a bicycle' });
  assert.equal(ahead.position, 'FFFFFFFF/0');
  sent.length = 0;
  assert.equal((await ahead.recall({ query: 'bicycle' })).memories.length, 1);
  assert.deepEqual(sent.map((s) => s.position), ['FFFFFFFF/0']);
  assert.throws(() => new MemoryClient({ baseUrl: t.base, position: 'nope' }), TypeError);

  // A position that can never be reached (another cluster's, one from before a failover) is
  // forgotten by setting undefined: the next recall carries none.
  assert.throws(() => { ahead.position = 'nope'; }, TypeError);
  assert.equal(ahead.position, 'FFFFFFFF/0', 'a refused position leaves the old one');
  ahead.position = undefined;
  sent.length = 0;
  await ahead.recall({ query: 'bicycle' });
  assert.deepEqual(sent.map((s) => s.position), [null]);
  ahead.position = '0/16B3748';
  assert.equal(ahead.position, '0/16B3748', 'or replaced by a handed-over one');
});
