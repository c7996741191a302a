// Memory as tools for the Vercel AI SDK (`generateText` / `streamText` from the `ai` package, an
// optional peer dependency: only this entry loads it). Each tool is the operation's MCP tool —
// same name, description and input schema, taken from the generated declarations — run through
// a MemoryClient, so an agent on the AI SDK and one on MCP see the same memory the same way.
// Input is not validated here: the service validates it, and its 400 (naming the field) reaches
// the model as the tool's error, which it can correct.
import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai';
import type { MemoryClient, OperationInput, OperationName, Output } from './index.js';
import { TOOLS } from './generated/operations.js';

/** The tools memoryTools offers, by their MCP names. */
export const MEMORY_TOOL_NAMES = ['remember', 'recall', 'recall_grouped', 'inspect', 'forget'] as const;
export type MemoryToolName = (typeof MEMORY_TOOL_NAMES)[number];

export interface MemoryToolsOptions<Names extends MemoryToolName = MemoryToolName> {
  /** Which tools to return (default: all five). Leave out `forget` for an agent that must not delete. */
  tools?: readonly Names[];
}

/** Each tool's operation, and so its input and answer types. */
type OperationOf = { [N in MemoryToolName]: (typeof TOOLS)[N]['operation'] };
export type MemoryTools<Names extends MemoryToolName = MemoryToolName> = {
  [N in Names]: Tool<OperationInput<OperationOf[N]>, Output<OperationOf[N]>>;
};

/**
 * Tools for `generateText({ tools })`, calling the service through `client`:
 * `generateText({ model, tools: memoryTools(client), prompt })`.
 */
export function memoryTools<Names extends MemoryToolName = MemoryToolName>(
  client: MemoryClient, options: MemoryToolsOptions<Names> = {},
): MemoryTools<Names> {
  const names = options.tools ?? (MEMORY_TOOL_NAMES as readonly MemoryToolName[] as readonly Names[]);
  for (const name of names) {
    if (!MEMORY_TOOL_NAMES.includes(name)) throw new TypeError(`memoryTools: unknown tool "${name}" (one of ${MEMORY_TOOL_NAMES.join(', ')})`);
  }
  return Object.fromEntries(names.map((name) => [name, memoryTool(client, name)])) as MemoryTools<Names>;
}

function memoryTool(client: MemoryClient, name: MemoryToolName): Tool {
  const declared = TOOLS[name];
  const operation: OperationName = declared.operation;
  return tool({
    title: declared.title,
    description: declared.description,
    inputSchema: jsonSchema<Record<string, unknown>>(declared.inputSchema as unknown as JSONSchema7),
    // The input's type is the operation's (declared.inputSchema is its schema); the service checks it.
    execute: (input) => client.call(operation, input as OperationInput<typeof operation>),
  });
}
