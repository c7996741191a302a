// Which extractor ran is said three ways: once in the start-up log, in every `end` answer
// (extraction_tier), and on every extracted memory inspect returns (the console's card).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { loadConfig } from '../src/shared/config.js';
import { createLogger } from '../src/shared/logger.js';
import { startService, type RunningService } from '../src/service.js';
import { post, tempDir } from './support/service.js';
import { FakeLlm } from './support/fake-llm.js';

interface Started {
  base: string;
  service: RunningService;
  lines: { level: number; msg: string }[];
  dir: string;
}

async function start(extractorUrl: string): Promise<Started> {
  const dir = tempDir();
  const lines: { level: number; msg: string }[] = [];
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_RATE_LIMIT: '0', SERVICE_POOL_THREADS: '2',
    SERVICE_EMBEDDER: 'hash', SERVICE_EXTRACTOR_URL: extractorUrl, SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0',
  });
  const service = await startService(config, createLogger('info', { write: (line) => lines.push(JSON.parse(line)) }));
  return { base: `http://127.0.0.1:${service.port}`, service, lines, dir };
}

async function endEpisode(s: Started, name: string, text: string) {
  const id = (await post(s.base, '/v1/episodes/start', { participants: [name] })).body.episode_id;
  await post(s.base, `/v1/episodes/${id}/message`, { role: 'user', content: text });
  return (await post(s.base, `/v1/episodes/${id}/end`, {})).body;
}

const RULES_LINE = 'extraction will use the offline rules (tier 1) until the LLM extraction endpoint answers';
const ANSWERED_LINE = 'the LLM extraction endpoint answered: extraction uses it (tier 2)';

let offline: Started;
let online: Started;
let llm: FakeLlm;
before(async () => {
  llm = await FakeLlm.start();
  [offline, online] = await Promise.all([start('http://127.0.0.1:9/v1'), start(llm.url)]);
});
after(async () => {
  for (const s of [offline, online]) {
    await s.service.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
  await llm.close();
});

describe('extraction tier', () => {
  test('offline: the log says once, at info, that the rules are used; end and inspect say tier 1', async () => {
    assert.deepEqual(await endEpisode(offline, 'tier-ana', 'I drive a red Tesla.'), { memories_created: 1, extraction_tier: 1 });
    assert.deepEqual(await endEpisode(offline, 'tier-ana', 'I live in Porto.'), { memories_created: 1, extraction_tier: 1 });
    const said = offline.lines.filter((l) => l.msg === RULES_LINE);
    assert.deepEqual(said.map((l) => l.level), [30], 'one info line');
    assert.equal(offline.lines.filter((l) => l.msg === ANSWERED_LINE).length, 0);
    const inspected = (await post(offline.base, '/v1/inspect', { entity: 'tier-ana' })).body;
    assert.deepEqual(inspected.semantic.map((m: any) => [m.content, m.extraction_tier]).sort(),
      [['tier-ana drives a red Tesla', 1], ['tier-ana lives in Porto', 1]]);
    assert.equal(inspected.episodic[0].extraction_tier, undefined, 'turns are not extracted: no tier on them');
  });

  test('with an endpoint that answers: tier 2 in end and inspect, and the log says so once', async () => {
    llm.reply = { kind: 'memories', memories: [{ content: 'tier-bo owns a sailboat', memory_type: 'semantic', confidence: 0.9 }] };
    assert.deepEqual(await endEpisode(online, 'tier-bo', 'I own a sailboat.'), { memories_created: 1, extraction_tier: 2 });
    llm.reply = { kind: 'memories', memories: [{ content: 'tier-bo sails on Sundays', memory_type: 'semantic', confidence: 0.9 }] };
    assert.deepEqual(await endEpisode(online, 'tier-bo', 'I sail on Sundays.'), { memories_created: 1, extraction_tier: 2 });
    assert.equal(online.lines.filter((l) => l.msg === ANSWERED_LINE).length, 1);
    const inspected = (await post(online.base, '/v1/inspect', { entity: 'tier-bo' })).body;
    assert.deepEqual(inspected.semantic.map((m: any) => m.extraction_tier), [2, 2]);
  });
});
