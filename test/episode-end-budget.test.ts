// `end` of a huge episode does bounded work: extraction reads the most recent turns within its
// text budget (the rules' MAX_RULE_TEXT_CHARS, which covers the LLM prompt's), and only those
// are read from the database — older turns' text is never loaded. What is extracted is exactly
// what reading every turn gave, and the answer is the spec's `{memories_created}` (plus the
// service's `extraction_tier`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { MAX_CONTENT_LENGTH } from '../src/shared/schemas.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import type { ReadPort } from '../src/workers/port/read-port.js';
import { extractEpisode, extractTurns } from '../src/workers/extraction/episode.js';
import { LlmExtractor } from '../src/workers/extraction/llm.js';
import { MAX_RULE_TEXT_CHARS } from '../src/workers/extraction/rules.js';
import { post, startTestService, tempDir, type TestService } from './support/service.js';

const TURNS = 40;
/** One ~100,000-character turn: statements the rules would turn into facts, were it read. */
const bigTurn = (i: number) => {
  const sentence = `I visited town number ${i} last week and I liked its harbour. `;
  return sentence.repeat(Math.floor(MAX_CONTENT_LENGTH / sentence.length));
};

/** Characters of every string in a value (what a read handed over). */
function charsIn(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + charsIn(v), 0);
  if (value instanceof Map) return charsIn([...value.values()]);
  if (value && typeof value === 'object') return Object.values(value).reduce((n: number, v) => n + charsIn(v), 0);
  return 0;
}

/** The same port, counting the characters each read returns. */
function counting(port: ReadPort): { port: ReadPort; chars: () => number } {
  let chars = 0;
  const proxy = new Proxy(port, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver);
      if (typeof member !== 'function') return member;
      return async (...args: unknown[]) => {
        const result = await member.apply(target, args);
        chars += charsIn(result);
        return result;
      };
    },
  });
  return { port: proxy, chars: () => chars };
}

describe('end of an episode of 40 turns of 100,000 characters', () => {
  let t: TestService;
  let db: Db;
  let port: ReadPort;
  const llm = new LlmExtractor({ extractorUrl: 'http://127.0.0.1:9/v1', extractorModel: 'none', extractorApiKey: undefined, extractorTimeoutMs: 5_000 });

  const bigEpisode = async (): Promise<string> => {
    const { episode_id } = (await post(t.base, '/v1/episodes/start', { participants: ['ana', 'helper-bot'] })).body;
    for (let i = 0; i < TURNS; i++) {
      assert.equal((await post(t.base, `/v1/episodes/${episode_id}/message`, { role: i % 2 ? 'assistant' : 'user', content: bigTurn(i) })).status, 200);
    }
    assert.equal((await post(t.base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: 'I live in Oslo and I drive a red van.' })).status, 200);
    return episode_id;
  };

  before(async () => {
    const dir = tempDir();
    t = await startTestService({ SERVICE_EMBEDDER: 'hash', SERVICE_PATH: join(dir, 'memory.db') });
    db = openDatabase(join(dir, 'memory.db'), { readonly: true });
    const namespaceId = db.prepare("SELECT id FROM namespaces WHERE name = 'default'").pluck().get() as number;
    port = new SqliteReadPort(db, namespaceId, 'default', { minSimilarity: 0.3, config: t.service.config });
  });
  after(async () => {
    db?.close();
    await t?.close();
  });

  test('reads the most recent turns within the budget, not the whole transcript, and extracts what reading all of it gave', async () => {
    const episodeId = await bigEpisode();
    const { port: watched, chars } = counting(port);
    const bounded = await extractEpisode(watched, llm, episodeId, null);
    // The newest turn whole (at most MAX_CONTENT_LENGTH) and older ones within the budget,
    // ids and roles beside them: nowhere near the 4,000,000 characters of the episode.
    assert.ok(chars() <= MAX_RULE_TEXT_CHARS + MAX_CONTENT_LENGTH + 10_000, `read ${chars()} characters`);
    assert.equal(bounded.extractor, 'rules');
    // Every turn read, in memory: what extraction made of the whole transcript before.
    const everything = db.prepare("SELECT id, role, content FROM memories WHERE episode_id = ? AND memory_type = 'episodic' ORDER BY seq")
      .all(episodeId) as { id: string; role: string; content: string }[];
    assert.equal(everything.length, TURNS + 1);
    const whole = await extractTurns(llm, await port.participants(episodeId), everything, null);
    assert.deepEqual(bounded.memories, whole.memories);
    assert.ok(bounded.memories.some((m) => m.content === 'ana lives in Oslo'), JSON.stringify(bounded.memories.map((m) => m.content)));
    // The turns read are the ones a delete racing the end is checked against.
    const read = new Set(bounded.sourceIds);
    assert.ok(read.has(everything.at(-1)!.id) && !read.has(everything[0]!.id));
  });

  test('a turn holding a NUL is not counted short (SQLite length() stops at the NUL)', async () => {
    const { episode_id } = (await post(t.base, '/v1/episodes/start', { participants: ['ana'] })).body;
    for (let i = 0; i < 30; i++) {
      assert.equal((await post(t.base, `/v1/episodes/${episode_id}/message`, { role: 'user', content: `\0${bigTurn(i).slice(1)}` })).status, 200);
    }
    const { port: watched, chars } = counting(port);
    await extractEpisode(watched, llm, episode_id, null);
    assert.ok(chars() <= MAX_RULE_TEXT_CHARS + MAX_CONTENT_LENGTH + 10_000, `read ${chars()} characters`);
  });

  test('answers 200 {memories_created, extraction_tier} and stores the newest statements', async () => {
    const episodeId = await bigEpisode();
    const ended = await post(t.base, `/v1/episodes/${episodeId}/end`, {});
    assert.equal(ended.status, 200);
    assert.deepEqual(Object.keys(ended.body).sort(), ['extraction_tier', 'memories_created']);
    assert.ok(Number.isInteger(ended.body.memories_created) && ended.body.memories_created >= 1);
    assert.equal(ended.body.extraction_tier, 1);
    const inspected = await post(t.base, '/v1/inspect', { entity: 'ana', limit: 1000 });
    const semantic = inspected.body.semantic.map((m: { content: string }) => m.content);
    assert.ok(semantic.includes('ana lives in Oslo'), JSON.stringify(semantic));
    assert.ok(!semantic.some((c: string) => /town number 0 /.test(c)), 'the oldest turn was read');
  });
});
