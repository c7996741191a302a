// Calls to the service's API from the page. The key is typed once and kept in sessionStorage
// only (gone when the tab closes, never in localStorage or a cookie), and sent as the API's
// `Authorization: Bearer` header on each call. URLs are relative to /console/, so the console
// keeps working behind a proxy that serves the service under a path prefix.

const KEY_ITEM = 'memory-runtime.api-key';
const NAMESPACE_ITEM = 'memory-runtime.namespace';

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_ITEM);
  },
  set key(value) {
    if (value) sessionStorage.setItem(KEY_ITEM, value);
    else sessionStorage.removeItem(KEY_ITEM);
  },
  /** The namespace an operator key switched to (sent as Memory-Namespace); null: the key's or the service's. */
  get namespace() {
    return sessionStorage.getItem(NAMESPACE_ITEM);
  },
  set namespace(value) {
    if (value) sessionStorage.setItem(NAMESPACE_ITEM, value);
    else sessionStorage.removeItem(NAMESPACE_ITEM);
  },
};

/** A failed call: `status` and the API's stable `code` (the message is for people). */
export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Fired on any 401, so the page can ask for the key again. */
export const unauthorized = new EventTarget();

async function request(method, path, body, { text = false, key = session.key, accept } = {}) {
  const headers = {};
  if (accept) headers.accept = accept;
  if (key) headers.authorization = `Bearer ${key}`;
  if (session.namespace) headers['memory-namespace'] = session.namespace;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(new URL(`..${path}`, document.baseURI), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (cause) {
    throw new ApiError(0, `the service did not answer (${cause.message})`, 'NETWORK');
  }
  if (!response.ok) {
    let payload = {};
    try {
      payload = await response.json();
    } catch {
      // not JSON: keep the status line
    }
    if (response.status === 401) unauthorized.dispatchEvent(new Event('unauthorized'));
    throw new ApiError(response.status, payload.error ?? `${response.status} ${response.statusText}`, payload.code);
  }
  if (text) return response.text();
  const result = await response.json();
  // recall and inspect leave memories out past the service's response budget, and say so in a header.
  if (response.headers.get('x-result-truncated') === 'true') Object.defineProperty(result, 'truncated', { value: true });
  return result;
}

const segment = (name) => encodeURIComponent(name);

/**
 * DELETE /v1/entities/{name} cannot name "." or "..": a browser parses every URL the WHATWG way,
 * which removes dot segments even when spelled %2E (the client library sends those paths raw
 * through node:http; a page cannot). The same `forget` operation is also the MCP tool of that
 * name on this port, behind the same key, taking the name in the body: used for these two names.
 */
async function forgetByTool(name) {
  const reply = await request('POST', '/mcp', {
    jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forget', arguments: { entity_name: name } },
  }, { accept: 'application/json, text/event-stream' });
  if (reply.error) throw new ApiError(400, reply.error.message, 'MCP_ERROR');
  if (reply.result.isError) throw new ApiError(400, reply.result.content[0]?.text ?? 'forget failed', 'TOOL_ERROR');
  return reply.result.structuredContent;
}

export const api = {
  /** Whether the service wants a key, asked without one (served beside the page, never a failed sign-in). */
  service: async () => {
    const response = await fetch(new URL('service.json', document.baseURI)).catch((cause) => {
      throw new ApiError(0, `the service did not answer (${cause.message})`, 'NETWORK');
    });
    if (!response.ok) throw new ApiError(response.status, `${response.status} ${response.statusText}`);
    return response.json();
  },
  /** Checks a typed key against a cheap authenticated route; throws ApiError 401 when wrong. */
  check: (key) => request('GET', '/v1/stats', undefined, { key }),
  health: () => request('GET', '/v1/health'),
  stats: () => request('GET', '/v1/stats'),
  /** Every namespace with its counts: operator keys only (403 for a key bound to one). */
  namespaces: () => request('GET', '/v1/namespaces'),
  metrics: () => request('GET', '/metrics', undefined, { text: true }),
  entities: ({ q = '', limit = 50, offset = 0 }) =>
    request('GET', `/v1/entities?${new URLSearchParams({ q, limit: String(limit), offset: String(offset) })}`),
  /** With superseded facts, so the page can show each attribute's chain. */
  inspect: (entity, limit = 50) => request('POST', '/v1/inspect', { entity, limit, include_superseded: true }),
  history: (memoryId) => request('GET', `/v1/memories/${segment(memoryId)}/history`),
  episodes: ({ entity = '', limit = 25, offset = 0 }) => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset) });
    if (entity) query.set('entity', entity);
    return request('GET', `/v1/episodes?${query}`);
  },
  recall: (body) => request('POST', '/v1/recall', body),
  deleteEntity: (name) => (name === '.' || name === '..' ? forgetByTool(name) : request('DELETE', `/v1/entities/${segment(name)}`)),
  snapshots: () => request('GET', '/v1/snapshots'),
  restore: (snapshotId) => request('POST', `/v1/snapshots/${segment(snapshotId)}/restore`, {}),
};
