// Whose fact a turn states: a role that names no participant and is not a generic human role
// is someone the episode does not know, and what they say must not be stored about a participant.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { post, startTestService, type TestService } from './support/service.js';

let s: TestService;
before(async () => {
  s = await startTestService();
});
after(async () => {
  await s.close();
});

async function facts(entity: string): Promise<string[]> {
  const inspected = (await post(s.base, '/v1/inspect', { entity })).body;
  return inspected.semantic.map((m: { content: string }) => m.content).sort();
}

describe('tier-1 extraction: speakers', () => {
  test('a turn whose role names nobody in the episode is not attributed to the first participant', async () => {
    const id = (await post(s.base, '/v1/episodes/start', { participants: ['spk-ana'] })).body.episode_id;
    await post(s.base, `/v1/episodes/${id}/message`, { role: 'user', content: 'I live in Porto.' });
    await post(s.base, `/v1/episodes/${id}/message`, { role: 'Bob', content: 'I live in Lisbon.' });
    const ended = (await post(s.base, `/v1/episodes/${id}/end`, {})).body;
    assert.equal(ended.extraction_tier, 1);
    assert.deepEqual(await facts('spk-ana'), ['spk-ana lives in Porto']);
  });

  test('chat spelling "ur" is the second person: it is resolved to the addressee or the fact is dropped, never stored as "ur"', async () => {
    await post(s.base, '/v1/entities', { name: 'spk-helper', kind: 'agent' });
    const id = (await post(s.base, '/v1/episodes/start', { participants: ['spk-cy', 'spk-helper'] })).body.episode_id;
    await post(s.base, `/v1/episodes/${id}/message`, { role: 'user', content: 'I love ur cooking.' });
    await post(s.base, `/v1/episodes/${id}/message`, { role: 'assistant', content: '1. Open ur settings.' });
    await post(s.base, `/v1/episodes/${id}/end`, {});
    const inspected = (await post(s.base, '/v1/inspect', { entity: 'spk-cy' })).body;
    const stored = [...inspected.semantic, ...inspected.procedural].map((m: { content: string }) => m.content).sort();
    assert.deepEqual(stored, ["1. Open spk-cy's settings"]);
  });
});
