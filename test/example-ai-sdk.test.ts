// examples/ai-sdk-agent runs as a user would run it — its own process, against a real local
// service — so the example cannot rot: the second conversation finds the first one's fact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startTestService, type TestService } from './support/service.js';

let t: TestService;
before(async () => { t = await startTestService(); });
after(async () => { await t.close(); });

test('the AI SDK agent example remembers across two conversations', async () => {
  const agent = fileURLToPath(new URL('../examples/ai-sdk-agent/agent.js', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [agent, t.base], { timeout: 60_000 });
  const [first, second] = stdout.trim().split('\n');
  assert.match(first, /^conversation 1: Noted: my favourite tea is oolong from Taiwan$/);
  assert.match(second, /^conversation 2: From memory: my favourite tea is oolong from Taiwan$/);
});
