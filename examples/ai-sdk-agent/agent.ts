// An AI SDK agent with memory across conversations: the first conversation tells it a fact, the
// second — a fresh generateText call with no shared history — asks about it, and the agent finds
// it through the memory tools. Run against a local service (`npm start` in the repository):
//   node dist/examples/ai-sdk-agent/agent.js [http://localhost:3000]
// With no model configured it uses the stub model beside it (no network, no key). For a real
// model, pass any AI SDK model instead, e.g. `openai('gpt-4o-mini')` from @ai-sdk/openai.
// In your own project the imports are '@memory-runtime/client' and '@memory-runtime/client/ai'.
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs, type LanguageModel } from 'ai';
import { MemoryClient } from '../../clients/typescript/src/index.js';
import { memoryTools } from '../../clients/typescript/src/ai.js';
import { stubModel } from './stub-model.js';

const USER = 'example-user';

export async function conversation(client: MemoryClient, model: LanguageModel, said: string): Promise<string> {
  const { text } = await generateText({
    model,
    system: `You talk with ${USER}. Remember what they tell you to remember; recall before answering questions about them.`,
    prompt: said,
    tools: memoryTools(client, { tools: ['remember', 'recall'] }),
    stopWhen: stepCountIs(3),
  });
  return text;
}

async function main(): Promise<void> {
  const client = new MemoryClient({ baseUrl: process.argv[2] ?? process.env.MEMORY_URL ?? 'http://localhost:3000', apiKey: process.env.MEMORY_API_KEY });
  const model = stubModel(USER);
  console.log(`conversation 1: ${await conversation(client, model, 'Remember: my favourite tea is oolong from Taiwan')}`);
  console.log(`conversation 2: ${await conversation(client, model, 'Which tea do I like?')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
