// MCP at /mcp: the SDK's web-standard streamable HTTP transport in stateless mode. Each POST
// gets a fresh Server + transport (a stateless transport must not be reused), answers with
// JSON — or with an SSE stream when the client's Accept ranks text/event-stream above
// application/json — and is torn down when the response is written or the client leaves.
// Auth and rate limiting already happened in the HTTP server's gate; the body is read here
// under the service's size limit, like every REST body.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { noBody } from '../body.js';
import { headerOf, type Mount, type RawRequest } from '../mount.js';
import type { NamespaceScope, OperationHandlers } from '../../core/operations/contract.js';
import { sendJson } from '../respond.js';
import type { Exchange } from '../exchange.js';
import { sendWebResponse, toWebRequest } from './bridge.js';
import { rebindingRefusal } from './dns-rebinding.js';
import { createMcpServer } from './server.js';

export const MCP_PATH = '/mcp';

export interface McpMountOptions {
  config: Config;
  ops: OperationHandlers;
  log: Logger;
  name: string;
  version: string;
}

export function createMcpMount(options: McpMountOptions): Mount {
  return { path: MCP_PATH, handle: (ex, request, scope) => handleMcp(options, ex, request, scope) };
}

async function handleMcp(options: McpMountOptions, ex: Exchange, request: RawRequest, scope: NamespaceScope): Promise<void> {
  // Stateless: there is no session to DELETE and no server-initiated message a GET stream could
  // carry, so only POST is served. 405 is what MCP clients expect for "no standalone stream".
  if (request.method !== 'POST') {
    sendJsonRpcError(ex, 405, `Method not allowed: ${request.method} ${MCP_PATH}; this stateless MCP endpoint serves POST only`, { Allow: 'POST' });
    return;
  }
  const refusal = rebindingRefusal(options.config, headerOf(request, 'host'), headerOf(request, 'origin'));
  if (refusal) {
    sendJsonRpcError(ex, 403, refusal);
    return;
  }
  // Attached before the first await: uWS drops body data that arrives with no reader.
  const body = await (ex.body?.read(request.contentLength, options.config.maxBodyBytes, request.signal) ?? noBody(request.signal));

  const server = createMcpServer({ ...options, scope });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !prefersEventStream(headerOf(request, 'accept')),
    maxRequestBodySize: options.config.maxBodyBytes,
  });
  // Client mistakes (wrong Accept, bad JSON-RPC, …) are answered by the transport; they are
  // not service faults, so they are only worth a debug line.
  transport.onerror = (error) => options.log.debug({ err: error }, 'MCP transport error');
  server.onerror = (error) => options.log.debug({ err: error }, 'MCP protocol error');
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(toWebRequest(request, body));
    await sendWebResponse(ex, response, request.signal);
  } finally {
    // Also ends any stream the client abandoned; an in-flight tool call still completes
    // (its write is committed) and its reply is dropped.
    await server.close().catch(() => {});
  }
}

/**
 * True when the client's Accept ranks text/event-stream strictly above application/json
 * (by q-value). MCP clients must list both; JSON is the default because it is cheaper and
 * every tool answers with a single message.
 */
export function prefersEventStream(accept: string): boolean {
  let json = 0;
  let sse = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(quality)) continue;
    if (type === 'application/json') json = Math.max(json, quality);
    else if (type === 'text/event-stream') sse = Math.max(sse, quality);
  }
  return sse > json;
}

/** Errors before MCP runs, in the JSON-RPC shape MCP clients parse (as the SDK transport does). */
function sendJsonRpcError(ex: Exchange, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(ex, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null }, headers);
}
