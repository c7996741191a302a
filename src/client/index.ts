// Typed client for the memory runtime's REST API (spec §4, "Client conventions"):
// Bearer key when configured, 30 s default timeout, recall limit default 5, every non-2xx
// answer raised as MemoryServiceError carrying the HTTP status and the server's error text.
// Types come from the operation declarations (shared/operations/), routes from routes.ts (checked
// against them): `call` reaches any declared operation; the named methods are the spec's
// convenient forms of it. Little comes from shared/ at run time (pg_lsn comparison, no
// schemas), so importing the client stays fast.
// Read-your-writes across nodes (PostgreSQL): the client keeps the furthest Memory-Position any
// answer named and sends it with every recall, so a recall landing on another node than the
// write (a load balancer over a fleet) still sees it.
import type { OperationName, OperationQuery, OperationRequest, Output } from '../shared/operations/index.js';
import type { EntityKind, Outcome } from '../shared/schemas.js';
import { CLIENT_ROUTES, type ClientRoute } from './routes.js';
import { furthestWalPosition, parseWalPosition, POSITION_HEADER } from '../shared/wal-position.js';

export type * from '../shared/schemas.js';
export type * from './request-types.js';
export type { OperationName, OperationQuery, OperationRequest, Output } from '../shared/operations/index.js';

export { DEFAULT_RECALL_LIMIT } from './routes.js';
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * One user value as one path segment. encodeURIComponent leaves "." and ".." as they are, and
 * URL parsing would then remove them as dot segments (`/v1/entities/..` is `/v1/`), so they are
 * spelled `%2E` / `%2E%2E` — which the server decodes back to "." and "..".
 */
function pathSegment(value: string): string {
  return value === '.' || value === '..' ? value.replace(/\./g, '%2E') : encodeURIComponent(value);
}

/** A path with a dot segment in any spelling ("%2E" counts too for WHATWG URL parsing). */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=[/?#]|$)/i;

export interface MemoryClientOptions {
  /** Base address, e.g. http://localhost:3000 */
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Injected fetch, for environments that need their own. */
  fetch?: typeof fetch;
  /**
   * A position to start from (another client's `position`, e.g. handed over with a task), so
   * this client's recalls see the writes before it too.
   */
  position?: string;
}

export class MemoryServiceError extends Error {
  constructor(
    readonly status: number,
    /** The server's `error` text (or the raw body when it was not JSON). */
    readonly errorText: string,
    /** The server's stable error code, when it sent one. */
    readonly code?: string,
  ) {
    super(`HTTP ${status}: ${errorText}`);
    this.name = 'MemoryServiceError';
  }
}

export class MemoryTimeoutError extends Error {
  constructor(readonly timeoutMs: number, path: string) {
    super(`request to ${path} timed out after ${timeoutMs} ms`);
    this.name = 'MemoryTimeoutError';
  }
}

export class MemoryClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private furthest: string | undefined = undefined;

  constructor(options: MemoryClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchImpl = options.fetch ?? fetch;
    this.position = options.position;
  }

  /**
   * PostgreSQL: the furthest write position this client has seen in answers (undefined: none
   * yet, or SQLite). Its recalls carry it; another client can start from it (options.position).
   */
  get position(): string | undefined {
    return this.furthest;
  }

  /**
   * Replaces the furthest position; `undefined` forgets it. The client only ever moves it
   * forward, so one that can never be reached (handed over from another cluster, or from before
   * a failover) would stay: the server then reads the primary for every recall, correct but
   * without the replicas. Forget it when the cluster is known to have changed.
   */
  set position(value: string | undefined) {
    if (value !== undefined && parseWalPosition(value) === null) {
      throw new TypeError(`position: not a WAL position (pg_lsn text such as 0/16B3748): ${value}`);
    }
    this.furthest = value;
  }

  /**
   * Any declared operation, through its first REST route: path parameters are taken from the
   * request's fields (each percent-encoded as one segment), the rest is the JSON body — unless
   * the route takes none. Fields left out get the schema's default on the server.
   */
  call<K extends OperationName>(name: K, request: OperationRequest<K>, query?: OperationQuery<K>): Promise<Output<K>> {
    const route: ClientRoute = CLIENT_ROUTES[name];
    const body: Record<string, unknown> = { ...request };
    let path = route.path.replace(/:(\w+)/g, (_, param: string) => {
      const field = route.params?.[param] ?? param;
      const value = String(body[field]);
      delete body[field];
      return pathSegment(value);
    });
    if (query) {
      const fields = Object.entries(query as Record<string, unknown>).filter(([, value]) => value !== undefined);
      path += `?${new URLSearchParams(fields.map(([key, value]): [string, string] => [key, String(value)]))}`;
    }
    return this.request(route.method, path, route.body ? body : undefined, route.position === 'accepted');
  }

  health(): Promise<Output<'health'>> {
    return this.call('health', {});
  }

  createEntity(name: string, kind?: EntityKind): Promise<Output<'createEntity'>> {
    return this.call('createEntity', kind === undefined ? { name } : { name, kind });
  }

  remember(input: OperationRequest<'remember'>): Promise<Output<'remember'>> {
    return this.call('remember', input);
  }

  recall(input: OperationRequest<'recall'>): Promise<Output<'recall'>> {
    return this.call('recall', input);
  }

  recallGrouped(input: OperationRequest<'recallGrouped'>): Promise<Output<'recallGrouped'>> {
    return this.call('recallGrouped', input);
  }

  startEpisode(participants: string[]): Promise<Output<'startEpisode'>> {
    return this.call('startEpisode', { participants });
  }

  addMessage(episodeId: string, role: string, content: string): Promise<Output<'addMessage'>> {
    return this.call('addMessage', { episode_id: episodeId, role, content });
  }

  endEpisode(episodeId: string, outcome?: Outcome | null): Promise<Output<'endEpisode'>> {
    return this.call('endEpisode', outcome === undefined ? { episode_id: episodeId } : { episode_id: episodeId, outcome });
  }

  /**
   * Deletes every memory of the entity. The server performs the same snapshot-backed
   * deletion whatever `hardDelete` says; the flag is sent for compatibility.
   */
  forget(entity: string, hardDelete = false): Promise<Output<'forget'>> {
    return this.call('forget', { entity_name: entity }, { hard_delete: hardDelete });
  }

  inspect(entity: string, limit?: number): Promise<Output<'inspect'>> {
    return this.call('inspect', limit === undefined ? { entity } : { entity, limit });
  }

  stats(): Promise<Output<'stats'>> {
    return this.call('stats', {});
  }

  consolidate(): Promise<Output<'consolidate'>> {
    return this.call('consolidate', {});
  }

  /** A page of entities by name; `q` keeps those whose name contains it (any case). */
  listEntities(input: OperationRequest<'listEntities'> = {}): Promise<Output<'listEntities'>> {
    return this.call('listEntities', {}, input);
  }

  /** Deletion snapshots beside the service's database, oldest first. */
  listSnapshots(): Promise<Output<'listSnapshots'>> {
    return this.call('listSnapshots', {});
  }

  /** Puts a deleted entity's memories back; a second call restores nothing (all already present). */
  restoreSnapshot(snapshotId: string): Promise<Output<'restoreSnapshot'>> {
    return this.call('restoreSnapshot', { snapshot_id: snapshotId });
  }

  /** `readsAt`: the route accepts a position, and gets the furthest this client has seen. */
  private async request<T>(method: string, path: string, body: unknown, readsAt: boolean): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (readsAt && this.furthest !== undefined) headers[POSITION_HEADER] = this.furthest;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let response: Answer;
    try {
      // fetch parses the URL the WHATWG way, which drops dot segments even when spelled %2E:
      // such a path (an entity named "." or "..") goes out through node:http, byte for byte.
      response = DOT_SEGMENT.test(path)
        ? await sendVerbatim(this.baseUrl, method, path, headers, payload, this.timeoutMs)
        : await this.viaFetch(method, path, headers, payload);
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') throw new MemoryTimeoutError(this.timeoutMs, path);
      throw error;
    }
    this.saw(response.position);
    const { text } = response;
    if (!response.ok) {
      let errorText = text;
      let code: string | undefined;
      try {
        const parsed = JSON.parse(text) as { error?: unknown; code?: unknown };
        if (typeof parsed.error === 'string') errorText = parsed.error;
        if (typeof parsed.code === 'string') code = parsed.code;
      } catch {
        // not JSON: keep the raw text
      }
      throw new MemoryServiceError(response.status, errorText, code);
    }
    return JSON.parse(text) as T;
  }

  /** Keeps a write's position if it is further than any before (a garbled header is ignored). */
  private saw(position: string | null): void {
    if (position !== null && parseWalPosition(position) !== null) this.furthest = furthestWalPosition(this.furthest, position);
  }

  private async viaFetch(method: string, path: string, headers: Record<string, string>, payload: string | undefined): Promise<Answer> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const response = await this.fetchImpl(this.baseUrl + path, { method, headers, body: payload, signal });
    return { ok: response.ok, status: response.status, text: await response.text(), position: response.headers.get(POSITION_HEADER) };
  }
}

/** What the client reads of an HTTP answer. */
interface Answer {
  ok: boolean;
  status: number;
  text: string;
  /** The Memory-Position header, or null. */
  position: string | null;
}

/** One request with the path sent exactly as given (no URL normalisation), over node:http(s). */
async function sendVerbatim(
  baseUrl: string, method: string, path: string, headers: Record<string, string>, payload: string | undefined, timeoutMs: number,
): Promise<Answer> {
  const base = new URL(baseUrl);
  const transport = base.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const signal = AbortSignal.timeout(timeoutMs);
  return new Promise((resolve, reject) => {
    const request = transport.request(
      {
        protocol: base.protocol, hostname: base.hostname.replace(/^\[|\]$/g, ''), port: base.port || undefined,
        method, path: base.pathname.replace(/\/+$/, '') + path, signal,
        headers: {
          ...headers,
          ...(payload === undefined ? {} : { 'content-length': String(Buffer.byteLength(payload)) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const position = response.headers[POSITION_HEADER.toLowerCase()];
          resolve({ ok: status >= 200 && status < 300, status, text: Buffer.concat(chunks).toString('utf8'), position: typeof position === 'string' ? position : null });
        });
      },
    );
    request.on('error', (error) => reject(signal.aborted ? signal.reason : error));
    request.end(payload);
  });
}
