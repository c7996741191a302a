// One MCP tools/call over plain HTTP, the way an agent's MCP client sends it (JSON answer, with
// the call's `_meta` when given): what the read-your-writes tests pass positions through.
import assert from 'node:assert/strict';

/** The tool call's JSON-RPC `result` (a CallToolResult: content, structuredContent, _meta, isError). */
export async function mcpCall(base: string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } }),
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { result: unknown }).result;
}
