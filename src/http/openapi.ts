// The OpenAPI 3.1 document, generated from the route table and the TypeBox schemas the routes
// validate with — nothing here restates a body. OpenAPI 3.1 schemas are JSON Schema 2020-12,
// which is what TypeBox emits, so schemas are copied over as they are; every schema exported
// from shared/schemas.ts becomes a named component, anything else is inlined.
import type { TSchema } from 'typebox';
import * as schemas from '../shared/schemas.js';
import { ERROR_CODES, STATUS_TEXT, type ErrorCode } from '../shared/errors.js';
import type { Route } from './routes.js';
import { POSITION_HEADER, WAL_POSITION_PATTERN } from '../shared/wal-position.js';
import { NAMESPACE_HEADER } from './namespace-scope.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  version: string;
  /** Bearer keys are configured: every operation requires one and may answer 401. */
  auth: boolean;
  /** The rate limiter is on: every operation may answer 429. */
  rateLimited: boolean;
}

/**
 * One response component per error status, from the error catalogue: named after the reason
 * phrase ('Not Found' → NotFound), described by the codes answered with that status.
 */
function errorResponse(status: number): { name: string; description: string } {
  const codes = Object.entries(ERROR_CODES).filter(([, entry]) => entry.status === status);
  return {
    name: STATUS_TEXT[status].replace(/ /g, ''),
    description: codes.map(([code, entry]) => `${code}: ${entry.when}`).join('; '),
  };
}

/** TypeBox values exported from schemas.ts, by identity, so a route's schema finds its name. */
const NAMED = new Map<unknown, string>(
  Object.entries(schemas)
    .filter(([, value]) => typeof value === 'object' && value !== null && !Array.isArray(value))
    .map(([name, value]) => [value, name]),
);

/**
 * Memory-Position (core/operations/contract.ts), stated once as components: the header every write that commits answers
 * with and every replica-served read accepts. Documented on either backend, saying it is
 * PostgreSQL's: the document describes the API, which SQLite serves with the same routes.
 */
const POSITION_SCHEMA = { type: 'string', pattern: WAL_POSITION_PATTERN, examples: ['0/16B3748'] };
const POSITION_COMPONENTS = {
  headers: {
    MemoryPosition: {
      description: 'PostgreSQL only (absent on SQLite, and when the write committed nothing): the WAL position (pg_lsn text) of the commit that stored this write. ' +
        `Send it as the ${POSITION_HEADER} header of a recall, on any node, and the recall sees this write.`,
      schema: POSITION_SCHEMA,
    },
  },
  parameters: {
    MemoryNamespace: {
      name: NAMESPACE_HEADER,
      in: 'header',
      required: false,
      description: 'The namespace the request acts on. A key bound to a namespace acts on its own (naming another: 403 ' +
        'NAMESPACE_FORBIDDEN, whether or not it exists); an operator key, or any request while auth is off, acts on the one ' +
        'named here, else on SERVICE_NAMESPACE. 1 to 128 characters, no control characters, valid UTF-8, not repeated with ' +
        'different values: otherwise 400 INVALID_NAMESPACE. A namespace nothing was stored in reads as empty.',
      schema: { type: 'string', minLength: 1, maxLength: 128 },
    },
    MemoryPosition: {
      name: POSITION_HEADER,
      in: 'header',
      required: false,
      description: `A position a write answered with (its ${POSITION_HEADER} header). PostgreSQL: the recall sees at least every ` +
        'write up to it — a replica serves it once it has replayed that far (waiting up to SERVICE_READ_MAX_LAG_MS), else ' +
        'the primary (at once for a position past the primary\'s own). Anything but pg_lsn text: 400 INVALID_VALUE. SQLite ignores ' +
        'the header: it holds every write already and its writes name no position.',
      schema: POSITION_SCHEMA,
    },
  },
};

/** Plain JSON (drops anything TypeBox keeps off the wire). */
const plain = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema)) as Json;

export function buildOpenApiDocument(routes: Route[], options: OpenApiOptions): Json {
  const components: Json = {};
  const ref = (schema: TSchema): Json => {
    const name = NAMED.get(schema);
    if (name === undefined) return plain(schema);
    components[name] = plain(schema);
    return { $ref: `#/components/schemas/${name}` };
  };
  const paths: Record<string, Json> = {};
  const errorStatuses = new Set<number>();
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const method = route.method === 'del' ? 'delete' : route.method;
    (paths[path] ??= {})[method] = operation(route, options, ref, errorStatuses);
  }
  const document: Json = {
    openapi: '3.1.0',
    info: {
      title: 'memory-runtime',
      version: options.version,
      description: 'Memory runtime for AI agents. Errors are {error, code}; see the project README for the details.',
    },
    paths,
    components: {
      schemas: { ...components, ErrorResponse: plain(schemas.ErrorResponse) },
      responses: Object.fromEntries([...errorStatuses].sort().map(errorResponse).map(({ name, description }) => [name, {
        description,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
      }])),
      ...POSITION_COMPONENTS,
      ...(options.auth ? { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } } : {}),
    },
  };
  if (options.auth) document.security = [{ bearerAuth: [] }];
  return document;
}

function operation(route: Route, options: OpenApiOptions, ref: (schema: TSchema) => Json, errorStatuses: Set<number>): Json {
  const parameters: Json[] = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: route.params?.properties[name] ? ref(route.params.properties[name]) : { type: 'string' },
  }));
  const pathParameters = parameters.length;
  for (const [name, schema] of Object.entries(route.query?.properties ?? {})) {
    parameters.push({ name, in: 'query', required: route.query!.required?.includes(name) ?? false, schema: ref(schema) });
  }
  if (route.position === 'accepted') parameters.push({ $ref: '#/components/parameters/MemoryPosition' });
  parameters.push({ $ref: '#/components/parameters/MemoryNamespace' });
  // Every route refuses a query parameter it does not list, and a body field it does not take.
  const codes: ErrorCode[] = ['INTERNAL', 'SHUTTING_DOWN', 'SERVER_BUSY', 'UNKNOWN_FIELD', 'INVALID_NAMESPACE', ...(route.errors ?? [])];
  if (options.auth) codes.push('UNAUTHORIZED', 'NAMESPACE_FORBIDDEN');
  if (options.rateLimited) codes.push('RATE_LIMITED');
  if (route.body) codes.push('INVALID_VALUE', 'BODY_TOO_LARGE', 'MALFORMED_BODY');
  if (route.position === 'accepted') codes.push('INVALID_VALUE');
  if (pathParameters > 0) codes.push('INVALID_PATH');
  const statuses = new Set(codes.map((code) => ERROR_CODES[code].status));

  const success: Json = { description: route.summary ?? 'Success' };
  if (route.response) success.content = { [route.produces ?? 'application/json']: { schema: ref(route.response) } };
  if (route.position === 'returned') success.headers = { [POSITION_HEADER]: { $ref: '#/components/headers/MemoryPosition' } };
  const responses: Json = { [String(route.status)]: success };
  for (const status of [...statuses].sort((a, b) => a - b)) {
    errorStatuses.add(status);
    responses[String(status)] = { $ref: `#/components/responses/${errorResponse(status).name}` };
  }

  return {
    operationId: operationId(route),
    ...(route.summary ? { summary: route.summary } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? { requestBody: { required: !route.bodyOptional, content: { 'application/json': { schema: ref(route.body.schema) } } } }
      : {}),
    responses,
  };
}

/** `post /v1/episodes/:id/message` → `postEpisodesIdMessage`: stable and unique per route. */
function operationId(route: Route): string {
  const words = route.path.replace(/^\/v1\//, '/').split(/[/:_]+/).filter(Boolean);
  const method = route.method === 'del' ? 'delete' : route.method;
  return method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}
