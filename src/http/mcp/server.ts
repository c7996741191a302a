// The MCP server: the SDK's low-level `Server` (McpServer wants zod schemas; ours are TypeBox
// JSON Schemas, which the low-level API takes as they are). A fresh one is built per HTTP
// request (stateless mode), so everything expensive — the tool list, the validators, the
// SDK's JSON Schema validator — is built once and shared.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { jsonText, valueOf, type NamespaceScope, type OperationHandlers } from '../../core/operations/contract.js';
import { MEMORY_TOOLS, TOOLS_BY_NAME } from './tools.js';
import { publicError } from '../public-error.js';
import { positionReader } from '../caller-position.js';
import { POSITION_META_KEY } from '../../shared/wal-position.js';

/**
 * Results up to this size are also given as JSON text: MCP 2025-06-18 requires structuredContent
 * for tools with an outputSchema and says a tool SHOULD also return the serialised JSON as text,
 * for clients that read only `content` (several still do). Larger ones are not sent twice —
 * the text then says where the data is. Counted in UTF-8 bytes, not characters (CJK text is
 * 3 bytes a character): a copy costs at most 1 MiB of JSON more per answer — up to ~2 MiB on
 * the wire, where the copy is escaped again inside the JSON-RPC message (each `"` and `\`
 * doubles) — whatever SERVICE_MAX_RESPONSE_BYTES is, and covers any recall of ordinary
 * memories (limit 1000 × 1,000 characters); bench:budget measures it.
 */
const TEXT_COPY_MAX_BYTES = 1024 * 1024;

const TRUNCATED_NOTE = 'Some memories were left out to keep the answer within the response budget; lower limit or narrow the query.';

export interface McpServerOptions {
  /** The backend decides whether a recall's position in `_meta` is read (caller-position.ts). */
  config: Pick<Config, 'postgres'>;
  name: string;
  version: string;
  ops: OperationHandlers;
  log: Logger;
  /** The namespace this request's tool calls act on (decided where it was authenticated). */
  scope: NamespaceScope;
}

const INSTRUCTIONS =
  'Long-term memory for agents. Use recall (or recall_grouped) before answering anything that may depend on earlier ' +
  'conversations; use remember to store durable facts about a named entity (a user, agent, team or tool); record ' +
  'whole conversations with episode_start, episode_message and episode_end, which extracts facts when the episode ends. ' +
  'inspect lists what is known about one entity, forget deletes it, stats counts memories.';

const LISTED_TOOLS: Tool[] = MEMORY_TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.input.schema as Tool['inputSchema'],
  outputSchema: tool.output as Tool['outputSchema'],
  annotations: { title: tool.title, ...tool.annotations },
}));

// The SDK would otherwise build (and compile formats into) a new Ajv for every request.
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

export function createMcpServer(options: McpServerOptions): Server {
  const server = new Server(
    { name: options.name, version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: SCHEMA_VALIDATOR },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: LISTED_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(options, request.params.name, request.params.arguments ?? {}, request.params._meta),
  );
  return server;
}

/** Where a bad position in a tool call's `_meta` is named in the error. */
const POSITION_META_FIELD = `_meta["${POSITION_META_KEY}"]`;

/**
 * Runs one tool. Bad arguments and domain failures (unknown episode, …) are tool results with
 * `isError: true` carrying the REST error message, so the model can read and correct them;
 * an unknown tool name is a protocol error, as the MCP spec asks. `meta`: the call's `_meta`,
 * where a recall finds the position it must read at (caller-position.ts) — the agent's MCP
 * client passes on what a write's result carried in its own `_meta`.
 */
export async function callTool(options: McpServerOptions, name: string, args: unknown, meta?: Record<string, unknown>): Promise<CallToolResult> {
  const tool = TOOLS_BY_NAME.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${name}'; available: ${[...TOOLS_BY_NAME.keys()].join(', ')}`);
  try {
    const position = tool.position === 'accepted' ? positionReader(options.config)(meta?.[POSITION_META_KEY], POSITION_META_FIELD) : undefined;
    const answer = await tool.run(options.ops, tool.input.parse(args), position === undefined ? options.scope : { ...options.scope, position });
    // An answer the pool serialised is parsed once, here, and its JSON reused as the text.
    const json = jsonText(answer);
    const bytes = answer.json ? answer.json.byteLength : Buffer.byteLength(json);
    const structuredContent = valueOf(answer, json) as Record<string, unknown>;
    return {
      content: contentOf(json, bytes, answer.truncated === true),
      structuredContent,
      ...(answer.position === undefined ? {} : { _meta: { [POSITION_META_KEY]: answer.position } }),
    };
  } catch (thrown) {
    const error = publicError(thrown, options.log, { tool: name }, 'MCP tool failed');
    return { content: [{ type: 'text', text: error.message }], isError: true };
  }
}

/** The JSON (`bytes` long in UTF-8) as text up to TEXT_COPY_MAX_BYTES, else where it is; then a note if it was cut. */
function contentOf(json: string, bytes: number, truncated: boolean): CallToolResult['content'] {
  const data = bytes <= TEXT_COPY_MAX_BYTES ? json : `The result (${bytes} bytes of JSON) is in structuredContent.`;
  const content: CallToolResult['content'] = [{ type: 'text', text: data }];
  if (truncated) content.push({ type: 'text', text: TRUNCATED_NOTE });
  return content;
}
