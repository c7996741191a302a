// memoryTools (clients/typescript/src/ai.ts) in the AI SDK's own generateText loop, driven by the
// SDK's MockLanguageModelV3 (examples/ai-sdk-agent/stub-model.ts), against a real service: what
// the first conversation stores, a second one with no shared history recalls.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, stepCountIs } from 'ai';
import { MemoryClient } from '../src/client/index.js';
import { MEMORY_TOOL_NAMES, memoryTools } from '../clients/typescript/src/ai.js';
import { stubModel } from '../examples/ai-sdk-agent/stub-model.js';
import { OPERATIONS } from '../src/shared/operations/index.js';
import { startTestService, type TestService } from './support/service.js';

let t: TestService;
before(async () => { t = await startTestService(); });
after(async () => { await t.close(); });

const talk = (client: MemoryClient, entity: string, prompt: string) =>
  generateText({ model: stubModel(entity), prompt, tools: memoryTools(client), stopWhen: stepCountIs(3) });

test('a mock model remembers in one conversation and recalls in the next', async () => {
  const client = new MemoryClient({ baseUrl: t.base });
  const first = await talk(client, 'ai-alice', 'Remember: Alice is allergic to peanuts');
  assert.deepEqual(first.steps[0].toolCalls.map((call) => call.toolName), ['remember']);
  assert.match(first.text, /Alice is allergic to peanuts/);

  const second = await talk(client, 'ai-alice', 'what is alice allergic to');
  assert.deepEqual(second.steps[0].toolCalls.map((call) => call.toolName), ['recall']);
  assert.match(second.text, /Alice is allergic to peanuts/, 'the fact came back through the recall tool');
  // …and from the service: another entity's conversation finds nothing of Alice's.
  const other = await talk(client, 'ai-bob', 'what is alice allergic to');
  assert.doesNotMatch(other.text, /peanuts/);
});

test('the tools are the MCP tools: names, descriptions and input schemas from the declarations', () => {
  const tools = memoryTools(new MemoryClient({ baseUrl: t.base }));
  assert.deepEqual(Object.keys(tools), [...MEMORY_TOOL_NAMES]);
  for (const declared of Object.values(OPERATIONS)) {
    const mcp = 'mcp' in declared ? declared.mcp : undefined;
    if (!mcp || !(mcp.name in tools)) continue;
    const made = tools[mcp.name as keyof typeof tools];
    assert.equal(made.description, mcp.description, mcp.name);
    assert.deepEqual((made.inputSchema as { jsonSchema: unknown }).jsonSchema, JSON.parse(JSON.stringify(declared.input)), mcp.name);
  }
});

test('a selection of tools, and an unknown name refused', () => {
  const client = new MemoryClient({ baseUrl: t.base });
  assert.deepEqual(Object.keys(memoryTools(client, { tools: ['recall', 'inspect'] })), ['recall', 'inspect']);
  assert.throws(() => memoryTools(client, { tools: ['drop_everything' as never] }), /unknown tool "drop_everything"/);
});

test('a call the service refuses fails with its status, naming the field (the SDK hands that to the model as a tool error)', async () => {
  const client = new MemoryClient({ baseUrl: t.base });
  const tools = memoryTools(client, { tools: ['recall'] });
  await assert.rejects(
    Promise.resolve(tools.recall.execute!({ query: 'x', limit: 0 } as never, { toolCallId: 'c', messages: [] })),
    (error: Error & { status?: number; code?: string }) => error.status === 400 && /limit/.test(error.message),
  );
});
