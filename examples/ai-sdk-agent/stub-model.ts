// A stand-in language model for running the example (and its test) with no network and no key:
// the AI SDK's own MockLanguageModelV3, scripted like a tool-using model. A user turn starting
// "Remember" becomes a `remember` call; any other turn becomes a `recall` call; once a tool has
// answered, the model replies in words built from the tool's result — so whatever the reply says
// about the past came back from the memory service, not from this script.
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';

const USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

export function stubModel(entity: string): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> => {
      const last = options.prompt[options.prompt.length - 1];
      if (last.role === 'tool') return reply(describe(last.content[0]));
      const said = last.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ') : '';
      const remember = /^remember:?\s*/i.exec(said);
      const [toolName, input] = remember
        ? ['remember', { entity, fact: said.slice(remember[0].length) }]
        : ['recall', { query: said, entity }];
      calls += 1;
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${calls}`, toolName, input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

function reply(text: string): LanguageModelV3GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: undefined }, usage: USAGE, warnings: [] };
}

/** The model's words for a tool's result: what it stored, or the best memory recalled. */
function describe(part: unknown): string {
  const { toolName, output } = part as { toolName: string; output: { type: string; value: unknown } };
  if (output.type !== 'json') return `The ${toolName} tool failed: ${JSON.stringify(output.value)}`;
  const value = output.value as { content?: string; memories?: { content: string }[] };
  if (toolName === 'remember') return `Noted: ${value.content}`;
  const best = value.memories?.[0];
  return best ? `From memory: ${best.content}` : 'I do not remember anything about that.';
}
