// Typed client for the memory runtime's REST API (spec §4, "Client conventions"):
// Bearer key when configured, 30 s default timeout, recall limit default 5, every non-2xx
// answer raised as MemoryServiceError carrying the HTTP status and the server's error text.
// A package of its own with no dependencies: its types, route table and tool declarations are
// generated from the server's operation declarations (generated/, `npm run generate` at the
// repository root), so nothing here restates a field. One calling style: every method takes the
// operation's fields as one object, named as in the REST body (`call` reaches any operation the
// same way; path and query fields are taken out of the object by the route table).
// Read-your-writes across nodes (PostgreSQL): the client keeps the furthest Memory-Position any
// answer named and sends it with every recall, so a recall landing on another node than the
// write (a load balancer over a fleet) still sees it.
import { ROUTES, type OperationName, type Operations } from './generated/operations.js';
import { furthestWalPosition, parseWalPosition, POSITION_HEADER } from './generated/wal-position.js';

export type * from './generated/operations.js';
export { DEFAULT_RECALL_LIMIT, ROUTES, TOOLS } from './generated/operations.js';
export { POSITION_HEADER } from './generated/wal-position.js';

/** What a caller sends: fields with a default may be left out. */
export type OperationRequest<K extends OperationName> = Operations[K]['request'];
/** The query string a caller may send on the operation's route (never: none). */
export type OperationQuery<K extends OperationName> = Operations[K]['query'];
/** One method's argument: the request's fields and, where the route takes any, its query fields. */
export type OperationInput<K extends OperationName> =
  [OperationQuery<K>] extends [never] ? OperationRequest<K> : OperationRequest<K> & OperationQuery<K>;
export type Output<K extends OperationName> = Operations[K]['response'];

// The names callers have always used for what they send.
export type CreateEntityInput = OperationRequest<'createEntity'>;
export type RememberInput = OperationRequest<'remember'>;
export type RecallInput = OperationRequest<'recall'>;
export type RecallGroupedInput = OperationRequest<'recallGrouped'>;
export type StartEpisodeInput = OperationRequest<'startEpisode'>;
export type AddMessageInput = OperationRequest<'addMessage'>;
export type EndEpisodeRequest = OperationRequest<'endEpisode'>;
/** The body of POST /v1/episodes/{id}/message (the id is in the path). */
export type EpisodeMessageInput = Omit<OperationRequest<'addMessage'>, 'episode_id'>;
/** The body of POST /v1/episodes/{id}/end (the id is in the path). */
export type EndEpisodeInput = Omit<OperationRequest<'endEpisode'>, 'episode_id'>;
export type ForgetInput = OperationInput<'forget'>;
export type InspectInput = OperationRequest<'inspect'>;
export type ListEntitiesInput = OperationRequest<'listEntities'>;
export type ListNamespacesInput = OperationRequest<'listNamespaces'>;
export type ListEpisodesInput = OperationRequest<'listEpisodes'>;
export type RestoreSnapshotInput = OperationRequest<'restoreSnapshot'>;

/** What the route table says of one operation's route. */
interface ClientRoute {
  readonly method: string;
  readonly path: string;
  /** Path parameter → the input field it is taken from. */
  readonly params?: Readonly<Record<string, string>>;
  /** Input fields sent in the query string. */
  readonly query?: readonly string[];
  /** False when the route takes no body (the input's fields are all in the path or query). */
  readonly body: boolean;
  readonly position?: 'returned' | 'accepted';
}

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
  /**
   * Sent as the Memory-Namespace header: the namespace an operator key (or a service without
   * keys) acts on. A key bound to a namespace acts on its own whatever this says, and naming
   * another is refused (403 NAMESPACE_FORBIDDEN).
   */
  namespace?: string;
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
  private readonly namespace: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private furthest: string | undefined = undefined;

  constructor(options: MemoryClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.namespace = options.namespace;
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
   * Any declared operation, through its first REST route: path parameters and query fields are
   * taken from the input (a path value percent-encoded as one segment), the rest is the JSON
   * body — unless the route takes none. Fields left out get the schema's default on the server.
   */
  call<K extends OperationName>(name: K, input: OperationInput<K>): Promise<Output<K>> {
    const route: ClientRoute = ROUTES[name];
    const body: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    let path = route.path.replace(/:(\w+)/g, (_, param: string) => {
      const field = route.params?.[param] ?? param;
      const value = String(body[field]);
      delete body[field];
      return pathSegment(value);
    });
    const query: [string, string][] = [];
    for (const field of route.query ?? []) {
      if (body[field] !== undefined) query.push([field, String(body[field])]);
      delete body[field];
    }
    if (query.length > 0) path += `?${new URLSearchParams(query)}`;
    return this.request(route.method, path, route.body ? body : undefined, route.position === 'accepted');
  }

  health(): Promise<Output<'health'>> {
    return this.call('health', {});
  }

  /** Creates the entity, or answers the existing one. */
  createEntity(input: CreateEntityInput): Promise<Output<'createEntity'>> {
    return this.call('createEntity', input);
  }

  remember(input: RememberInput): Promise<Output<'remember'>> {
    return this.call('remember', input);
  }

  recall(input: RecallInput): Promise<Output<'recall'>> {
    return this.call('recall', input);
  }

  recallGrouped(input: RecallGroupedInput): Promise<Output<'recallGrouped'>> {
    return this.call('recallGrouped', input);
  }

  startEpisode(input: StartEpisodeInput): Promise<Output<'startEpisode'>> {
    return this.call('startEpisode', input);
  }

  addMessage(input: AddMessageInput): Promise<Output<'addMessage'>> {
    return this.call('addMessage', input);
  }

  endEpisode(input: EndEpisodeRequest): Promise<Output<'endEpisode'>> {
    return this.call('endEpisode', input);
  }

  /**
   * Deletes every memory of the entity. The server performs the same snapshot-backed
   * deletion whatever `hard_delete` says; the flag is sent for compatibility.
   */
  forget(input: ForgetInput): Promise<Output<'forget'>> {
    return this.call('forget', { hard_delete: false, ...input });
  }

  inspect(input: InspectInput): Promise<Output<'inspect'>> {
    return this.call('inspect', input);
  }

  stats(): Promise<Output<'stats'>> {
    return this.call('stats', {});
  }

  consolidate(): Promise<Output<'consolidate'>> {
    return this.call('consolidate', {});
  }

  /** A page of entities by name; `q` keeps those whose name contains it (any case). */
  listEntities(input: ListEntitiesInput = {}): Promise<Output<'listEntities'>> {
    return this.call('listEntities', input);
  }

  /** A page of episodes, newest started first, with participants, outcome and times; `entity` keeps those it took part in. */
  listEpisodes(input: ListEpisodesInput = {}): Promise<Output<'listEpisodes'>> {
    return this.call('listEpisodes', input);
  }

  /** A page of the namespaces with their counts, in creation order (operator keys only). */
  listNamespaces(input: ListNamespacesInput = {}): Promise<Output<'listNamespaces'>> {
    return this.call('listNamespaces', input);
  }

  /** Deletion snapshots beside the service's database, oldest first. */
  listSnapshots(): Promise<Output<'listSnapshots'>> {
    return this.call('listSnapshots', {});
  }

  /** Puts a deleted entity's memories back; a second call restores nothing (all already present). */
  restoreSnapshot(input: RestoreSnapshotInput): Promise<Output<'restoreSnapshot'>> {
    return this.call('restoreSnapshot', input);
  }

  /** `readsAt`: the route accepts a position, and gets the furthest this client has seen. */
  private async request<T>(method: string, path: string, body: unknown, readsAt: boolean): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (this.namespace !== undefined) headers['memory-namespace'] = this.namespace;
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
