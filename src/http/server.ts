// The HTTP front end on uWebSockets.js. Per request, in this order: draining check → auth →
// rate limit → body (size-limited) → JSON → validation → operation → response. Everything
// needed from `req` is read synchronously first: uWS invalidates it at the first await.
// Mounts (MCP at /mcp) pass through the same gate and error mapping, then own the response.
// Every request, routed or not, gets a request id and ends in one access-log line and one
// metrics observation (route *pattern*, never the raw URL, so neither carries user data).
import type { RequestMetrics } from '../core/metrics.js';
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import type { Config } from '../shared/config.js';
import { ERROR_CODES, fail, type ServiceError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { AccessLog } from './access-log.js';
import { ApiKeyAuth, type ApiKey } from './auth.js';
import { NAMESPACE_HEADER_LOWER, resolveScope } from './namespace-scope.js';
import type { NamespaceScope } from '../core/operations/contract.js';
import { BodyBudget, BodyStream, noBody, parseJson } from './body.js';
import { captureRequest, headerOf, type Mount } from './mount.js';
import type { OperationHandlers } from '../core/operations/contract.js';
import { RateLimiter } from './rate-limit.js';
import { RawBody, sendError, sendJson, sendRaw } from './respond.js';
import type { Exchange } from './exchange.js';
import { publicError } from './public-error.js';
import { REQUEST_ID_HEADER, requestIdFrom } from './request-id.js';
import { checkQueryNames, parseQuery } from './query.js';
import type { Route, RouteResult } from './routes.js';
import { positionReader, type PositionReader } from './caller-position.js';
import { POSITION_HEADER } from '../shared/wal-position.js';

/** Where finished requests are counted (implemented by the Prometheus metrics). */

/** Status recorded for a request whose client went away before the answer. */
const CLIENT_CLOSED = ERROR_CODES.CLIENT_CLOSED.status;
/** Route label for requests that matched no route: raw URLs would make label values unbounded. */
const UNMATCHED = 'unmatched';

/** Who is asking, and what to log about the request once it is answered. */
interface Caller {
  authorization: string;
  /** Every Memory-Namespace header the request carried (namespace-scope.ts). */
  namespaces: string[];
  client: string;
  method: string;
  startedAt: number;
  /** A public mount: admitted without a key (see Mount.public). */
  public?: boolean;
}

interface Captured extends Caller {
  contentLength: number | null;
  rawParams: string[];
  /** The raw query string: the input of some routes, checked for unknown parameters on all. */
  rawQuery: string;
  /** The raw Memory-Position header ('' when absent), on routes that accept one. */
  rawPosition: string;
  /** Fires when the client goes away (uWS onAborted); only routes that read a body have one. */
  signal: AbortSignal | null;
}

export class HttpServer {
  private readonly app: TemplatedApp;
  private readonly auth: ApiKeyAuth;
  readonly limiter: RateLimiter;
  /** Failed authentications per client address: a key cannot be guessed at line rate. */
  readonly authFailures: RateLimiter;
  private readonly bodies: BodyBudget;
  private readonly access: AccessLog;
  private listenSocket: us_listen_socket | null = null;
  private draining = false;
  private inflight = 0;
  private drained: (() => void) | null = null;
  /** A recall's Memory-Position header: validated on PostgreSQL, ignored on SQLite. */
  private readonly readPosition: PositionReader;

  constructor(
    private readonly config: Config,
    private readonly ops: OperationHandlers,
    routes: Route[],
    private readonly log: Logger,
    mounts: Mount[] = [],
    private readonly metrics: RequestMetrics | null = null,
  ) {
    this.auth = new ApiKeyAuth(config.apiKeyBindings, config.apiKeysFile !== null);
    this.limiter = new RateLimiter(config.rateLimitPerMinute);
    this.authFailures = new RateLimiter(config.authEnabled ? config.authFailuresPerMinute : 0);
    this.bodies = new BodyBudget(config.maxInflightBodyBytes);
    this.access = new AccessLog(log);
    this.readPosition = positionReader(config);
    this.app = uWS.App();
    for (const route of routes) {
      // Counted once here, not per request (uWS wants the parameter index).
      const paramCount = route.path.split('/:').length - 1;
      const method = route.method === 'del' ? 'DELETE' : route.method.toUpperCase();
      this.app[route.method](route.path, (res, req) => this.accept(res, req, route, paramCount, method));
      // HEAD is GET without the body (RFC 9110 §9.3.2): same gate, same work, same headers.
      if (route.method === 'get') this.app.head(route.path, (res, req) => this.accept(res, req, route, paramCount, 'HEAD'));
    }
    for (const mount of mounts) this.app.any(mount.path, (res, req) => this.acceptMount(res, req, mount));
    this.registerFallbacks(routes);
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(this.config.host, this.config.port, (socket) => {
        if (!socket) {
          reject(new Error(`could not listen on ${this.config.host}:${this.config.port} (in use or not permitted)`));
          return;
        }
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
      });
    });
  }

  /** Stop accepting connections, answer late requests with 503, wait for in-flight ones. */
  async close(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    this.limiter.close();
    this.authFailures.close();
    if (this.inflight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private registerFallbacks(routes: Route[]): void {
    const methodsByPath = new Map<string, string[]>();
    for (const route of routes) {
      const name = route.method === 'del' ? 'DELETE' : route.method.toUpperCase();
      const names = name === 'GET' ? [name, 'HEAD'] : [name];
      methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), ...names]);
    }
    for (const [path, methods] of methodsByPath) {
      this.app.any(path, (res, req) => {
        const method = req.getMethod().toUpperCase();
        this.reject(res, req, path, fail.methodNotAllowed(method, path, methods.join(', ')), { Allow: methods.join(', ') });
      });
    }
    this.app.any('/*', (res, req) => {
      this.reject(res, req, UNMATCHED, fail.routeNotFound(req.getMethod().toUpperCase(), req.getUrl()));
    });
  }

  /**
   * Immediate answer from the synchronous part of a handler (already corked by uWS). With keys
   * set, an unauthenticated caller gets the 401 rather than the 404/405, so route names do not
   * leak to someone without a key.
   */
  private reject(res: HttpResponse, req: HttpRequest, route: string, error: ServiceError, headers: Record<string, string> = {}): void {
    const startedAt = performance.now();
    const ex = this.exchange(res, req, req.getHeader('content-length'));
    ex.head = req.getMethod() === 'head';
    res.onAborted(() => this.aborted(ex));
    const client = this.auth.enabled ? Buffer.from(res.getRemoteAddressAsText()).toString() : '';
    if (!this.auth.enabled || this.authenticate(ex, req.getHeader('authorization'), client) !== null) sendError(ex, error, headers);
    this.finished(ex, req.getMethod().toUpperCase(), route, startedAt);
  }

  /** A request id that is a configured key is replaced (request-id.ts); one closure, not one per request. */
  private readonly isKey = (value: string) => this.auth.enabled && this.auth.authenticate(`Bearer ${value}`) !== null;

  /** `contentLength` is the raw header; a request declaring a body gets its one data handler now. */
  private exchange(res: HttpResponse, req: HttpRequest, contentLength: string): Exchange {
    const ex: Exchange = { res, aborted: false, done: false, closeAfter: this.draining, requestId: requestIdFrom(req.getHeader(REQUEST_ID_HEADER), this.isKey) };
    if ((contentLength !== '' && contentLength !== '0') || req.getHeader('transfer-encoding') !== '') ex.body = new BodyStream(res, this.bodies);
    return ex;
  }

  private aborted(ex: Exchange): void {
    ex.aborted = true;
    ex.body?.end();
    ex.onAbort?.();
  }

  /** `method` is the route's, upper-cased once at registration (HEAD for the GET routes' HEAD form). */
  private accept(res: HttpResponse, req: HttpRequest, route: Route, paramCount: number, method: string): void {
    const length = req.getHeader('content-length');
    const exchange = this.exchange(res, req, length);
    if (method === 'HEAD') exchange.head = true;
    // Only a body reader (or a change waiting out pipelined requests) needs to hear that the
    // client left; the rest checks `aborted`. A GET without a body hears it only if it answers
    // later (see dispatch): one answered before uWS returns needs no handler.
    const abort = route.body || route.method !== 'get' ? new AbortController() : null;
    if (abort || exchange.body) {
      res.onAborted(() => {
        this.aborted(exchange);
        abort?.abort();
      });
    }
    const rawParams: string[] = [];
    for (let i = 0; i < paramCount; i++) rawParams.push(req.getParameter(i));
    const captured: Captured = {
      authorization: this.auth.enabled ? req.getHeader('authorization') : '',
      namespaces: namespaceHeaders(req),
      contentLength: length === '' ? null : Number(length),
      // The address keys the failed-authentication limiter (auth on) or the rate limiter (auth off).
      client: this.auth.enabled || this.limiter.enabled ? Buffer.from(res.getRemoteAddressAsText()).toString() : '',
      rawParams,
      rawQuery: req.getQuery() ?? '',
      rawPosition: route.position === 'accepted' ? req.getHeader(POSITION_REQUEST_HEADER) : '',
      signal: abort?.signal ?? null,
      method,
      startedAt: performance.now(),
    };
    void this.dispatch(exchange, route, captured);
  }

  private acceptMount(res: HttpResponse, req: HttpRequest, mount: Mount): void {
    const exchange = this.exchange(res, req, req.getHeader('content-length'));
    const startedAt = performance.now();
    const abort = new AbortController();
    res.onAborted(() => {
      this.aborted(exchange);
      abort.abort();
    });
    const request = captureRequest(res, req, abort.signal);
    exchange.head = request.method === 'HEAD';
    const caller: Caller = {
      authorization: headerOf(request, 'authorization'), client: request.client, method: request.method, startedAt, public: mount.public,
      namespaces: request.headers.filter(([name]) => name === NAMESPACE_HEADER_LOWER).map(([, value]) => value),
    };
    void this.guarded(exchange, mount.path, caller, (scope) => mount.handle(exchange, request, scope));
  }

  private dispatch(ex: Exchange, route: Route, captured: Captured): Promise<void> | void {
    return this.guarded(ex, route.path, captured, (scope) => {
      const params = captured.rawParams.map(decodeSegment);
      const query = route.ignoresQuery ? undefined
        : route.queryInput ? parseQuery(captured.rawQuery, route.queryInput) : checkQueryNames(captured.rawQuery, route.query);
      // Checked before the body is read: a bad header is refused whatever the body holds.
      const position = this.readPosition(captured.rawPosition, POSITION_HEADER);
      // A GET whose handler answers at once (health) is answered before uWS returns: no
      // promise hops, and the write is corked by uWS itself.
      if (!captured.signal) {
        const result = route.handle(this.ops, { body: undefined, params, query, position, scope });
        if (!(result instanceof Promise)) return this.send(ex, route, result);
        if (!ex.body) ex.res.onAborted(() => this.aborted(ex));
        return result.then((value) => this.send(ex, route, value));
      }
      const signal = captured.signal;
      // A change without a body still waits out pipelined requests (see BodyStream.read).
      const raw = route.body ? ex.body?.read(captured.contentLength, this.config.maxBodyBytes, signal) ?? noBody(signal) : noBody(signal);
      return raw
        .then((bytes) => {
          const body = route.body && !(route.bodyOptional && bytes.length === 0) ? route.body.parse(parseJson(bytes)) : undefined;
          // Parsed: the raw bytes are no longer held, so they leave the in-flight budget now,
          // not after a slow reader has drained the answer.
          ex.body?.release();
          return route.handle(this.ops, { body, params, query, position, scope });
        })
        .then((value) => this.send(ex, route, value));
    });
  }

  /** Resolves once the answer is written (a large one goes out as the socket takes it). */
  private send(ex: Exchange, route: Route, result: RouteResult): Promise<void> | void {
    if (result instanceof RawBody) return sendRaw(ex, route.status, result);
    const headers = result.truncated ? TRUNCATED_ANSWER : result.position === undefined ? undefined : { [POSITION_HEADER]: result.position };
    if (result.json) return sendRaw(ex, route.status, new RawBody('application/json', result.json), headers);
    sendJson(ex, route.status, result.value, headers);
  }

  /**
   * The one gate for every surface on the port (draining → auth → rate limit), then `work`,
   * with one mapping from thrown errors to `{error, code}` responses. `work` is started
   * synchronously so it can attach a body reader before uWS moves on; work that finishes
   * synchronously (health) is logged and counted in the same tick, without a promise.
   */
  private guarded(ex: Exchange, label: string, caller: Caller, work: (scope: NamespaceScope) => Promise<void> | void): Promise<void> | void {
    this.inflight++;
    let pending: Promise<void> | void;
    try {
      const scope = this.admit(ex, caller);
      pending = scope ? work(scope) : undefined;
    } catch (thrown) {
      return this.failed(ex, caller, label, thrown);
    }
    if (!pending) return this.settled(ex, caller, label);
    return pending.then(() => this.settled(ex, caller, label), (thrown) => this.failed(ex, caller, label, thrown));
  }

  private failed(ex: Exchange, caller: Caller, label: string, thrown: unknown): void {
    try {
      sendError(ex, publicError(thrown, this.log, { route: label, reqId: ex.requestId }, 'request failed'));
    } finally {
      this.settled(ex, caller, label);
    }
  }

  /** Whatever happened: the body's budget back, the access line, and the drain check. */
  private settled(ex: Exchange, caller: Caller, label: string): void {
    ex.body?.release();
    this.finished(ex, caller.method, label, caller.startedAt);
    this.inflight--;
    if (this.draining && this.inflight === 0) this.drained?.();
  }

  /** The access-log line and metrics for one request. Never the body, headers or raw URL. */
  private finished(ex: Exchange, method: string, route: string, startedAt: number): void {
    const status = ex.status ?? (ex.aborted ? CLIENT_CLOSED : 0);
    const durationMs = performance.now() - startedAt;
    this.metrics?.observeRequest(method, route, status, durationMs / 1000);
    this.access.write(ex.requestId, method, route, status, Math.round(durationMs * 100) / 100);
  }

  /**
   * The caller's key, or null after answering 401 — or 429 once this address has failed too
   * often (its key is then not even checked, so guessing keys runs at the limiter's pace).
   */
  private authenticate(ex: Exchange, authorization: string, address: string): ApiKey | null {
    const blocked = this.authFailures.retryAfter(address);
    if (blocked > 0) {
      sendError(ex, fail.tooManyAuthFailures(), { 'Retry-After': String(blocked) });
      return null;
    }
    const key = this.auth.authenticate(authorization);
    if (key === null) {
      this.authFailures.take(address);
      sendError(ex, fail.unauthorized(), { 'WWW-Authenticate': 'Bearer' });
    }
    return key;
  }

  /**
   * The namespace the request acts on; null when it was refused (and answered). Throws while
   * draining, when over capacity, and for a Memory-Namespace header the key may not use or that
   * is not a name (namespace-scope.ts).
   */
  private admit(ex: Exchange, caller: Caller): NamespaceScope | null {
    if (this.draining) {
      ex.closeAfter = true;
      throw fail.shuttingDown();
    }
    if (this.inflight > this.config.maxInflightRequests) {
      throw fail.tooManyRequests(this.config.maxInflightRequests);
    }
    let client = caller.client;
    let key: ApiKey | null = null;
    if (this.auth.enabled && !caller.public) {
      key = this.authenticate(ex, caller.authorization, caller.client);
      if (key === null) return null;
      client = `key:${key.digest}`;
    }
    // Public mounts (the console's files) hold no data: they act on no namespace of the caller's choosing.
    const scope = caller.public ? PUBLIC_SCOPE(this.config.namespace) : resolveScope(caller.namespaces, key, this.config.namespace);
    const perMinute = key?.perMinute ?? this.config.rateLimitPerMinute;
    const decision = this.limiter.take(client, perMinute);
    if (!decision.allowed) {
      sendError(ex, fail.rateLimited(perMinute), {
        'Retry-After': String(decision.retryAfterSeconds),
      });
      return null;
    }
    return scope;
  }

  /** The keys of SERVICE_API_KEYS_FILE, swapped whole (keys-file.ts reloads them). */
  replaceFileKeys(keys: ReadonlyMap<string, ApiKey>): void {
    this.auth.replaceFileKeys(keys);
  }
}

/** A read cut to the response budget says so beside the JSON (workers/response-budget.ts). */
const TRUNCATED_ANSWER = { 'X-Result-Truncated': 'true' };
/** uWS hands request headers over by lower-case name. */
const POSITION_REQUEST_HEADER = POSITION_HEADER.toLowerCase();

const PUBLIC_SCOPE = (namespace: string): NamespaceScope => ({ namespace, operator: false });

/**
 * Every Memory-Namespace header of the request, repeated ones included, an empty one as ''
 * (getHeader cannot tell an empty header from a missing one).
 */
function namespaceHeaders(req: HttpRequest): string[] {
  const found: string[] = [];
  req.forEach((name, value) => {
    if (name === NAMESPACE_HEADER_LOWER) found.push(value);
  });
  return found;
}

/** One path segment, percent-decoded exactly once. */
function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw fail.invalidPath(raw);
  }
}
