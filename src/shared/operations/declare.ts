// What an operation declaration says, once, for every surface: its input and output schemas,
// the error codes particular to it, its REST route(s) and its MCP tool. The HTTP layer builds
// routes, tools and the OpenAPI document from these; the client builds its calls from them.
// Only data lives here (no server code), so the client library can load it.
import type { TObject, TSchema } from 'typebox';
import type { ErrorCode } from '../errors.js';
import { closeObjects } from '../closed-schemas.js';

export interface RestBinding {
  method: 'get' | 'post' | 'delete';
  /** `:name` segments are path parameters (see `params`). */
  path: string;
  /** Status of a success; 200 unless said. */
  status?: 200 | 201;
  /** One line for the OpenAPI document. */
  summary: string;
  /**
   * The JSON body's schema: the operation's input when left out, another schema when some input
   * fields come from the path, `null` when the route takes no body (any body sent is ignored).
   */
  body?: TObject | null;
  /**
   * Path parameter → the input field it fills. A path that is the whole input (no body) is
   * validated as the input, with errors naming `params`; beside a body, the segment is passed on
   * as it is — an episode id that was never issued, whatever its form, is simply unknown (404).
   */
  params?: Readonly<Record<string, string>>;
  /**
   * Query parameters the client sends and the OpenAPI document lists. When the route takes no body
   * and this is the operation's input schema, the query string IS the input, validated by it
   * (http/query.ts); otherwise the service reads none (DELETE's hard_delete) but still refuses a
   * parameter not listed. A route without `query` takes no parameter at all.
   */
  query?: TObject;
  /**
   * On a route that takes no body (`body: null`, other than GET): what a body may still hold,
   * accepted and ignored because known clients send it (DELETE's hard_delete). Any other field
   * is refused as on every route; no body, or an empty one, is fine. Left out: an empty object.
   */
  ignoredBody?: TObject;
  /**
   * A probe's route (health): its query string is not read at all. Probes and load balancers add
   * cache-busters (`?ts=1`), and a route that takes no input has nothing a parameter could widen.
   */
  ignoresQuery?: true;
}

/** MCP tool hints (MCP 2025-06-18 ToolAnnotations). */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpBinding {
  /** The tool name the model calls. */
  name: string;
  title: string;
  /** Written for the model that decides when to call the tool. */
  description: string;
  annotations: ToolAnnotations;
}

type RestBindings = readonly [RestBinding, ...RestBinding[]];

export interface OperationDeclaration<
  Name extends string = string, Input extends TObject = TObject, Output extends TSchema = TSchema, Rest extends RestBindings = RestBindings,
> {
  name: Name;
  /** What the handler receives, validated, with the schema's defaults applied (MCP arguments too). */
  input: Input;
  output: Output;
  /** Error codes this operation answers beyond those every route may (validation, auth, 5xx). */
  errors: readonly ErrorCode[];
  /** Its REST routes; the first is the one the client calls, the others are compatibility forms. */
  rest: Rest;
  /** Its MCP tool, if agents may call it. */
  mcp?: McpBinding;
  /**
   * Read-your-writes across nodes and clients (PostgreSQL; shared/wal-position.ts). 'returned': a
   * write whose answer names the WAL position of its commit (REST: the Memory-Position header;
   * MCP: the result's `_meta`). 'accepted': a read a replica may serve, which takes such a
   * position (request header; MCP request `_meta`) and sees at least the writes before it.
   * SQLite names no position and ignores one given (it holds every write already).
   */
  position?: PositionUse;
}

export type PositionUse = 'returned' | 'accepted';

/**
 * The declaration as given, with the literal name and the routes' types kept, so declarations can
 * be collected by name and the client can type a route's query string from its schema — and with
 * every object it takes closed: an unknown field is refused, never ignored (closed-schemas.ts).
 */
export function declareOperation<const Name extends string, Input extends TObject, Output extends TSchema, const Rest extends RestBindings>(
  declaration: OperationDeclaration<Name, Input, Output, Rest>,
): OperationDeclaration<Name, Input, Output, Rest> {
  closeObjects(declaration.input);
  for (const binding of declaration.rest) {
    for (const schema of [binding.body, binding.query, binding.ignoredBody]) if (schema) closeObjects(schema);
  }
  return declaration;
}

// A memory store is a closed world: no tool reaches anything outside this service.
export const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
export const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
