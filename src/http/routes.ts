// The REST surface, derived from the operation declarations (shared/operations/): one route per
// REST binding, whose body is validated with the declared schema (compiled once, at start-up)
// and handed, with its path parameters, to the operation's handler. The same routes, with
// their response schemas, generate the OpenAPI document (openapi.ts).
import Type, { type TObject, type TSchema } from 'typebox';
import { fail, type ErrorCode } from '../shared/errors.js';
import { EmptyBody } from '../shared/schemas.js';
import {
  OPERATIONS, REST_BINDINGS, type OperationDeclaration, type OperationName, type PositionUse, type RestBinding,
} from '../shared/operations/index.js';
import { compileValidator, type Validator } from '../shared/validation.js';
import { invoke, type Answer, type NamespaceScope, type OperationHandlers, type RequestContext } from '../core/operations/contract.js';
import type { RawBody } from './respond.js';

export interface RouteInput {
  body: any;
  /** The query string validated as the input, on routes whose query is their input (`queryInput`). */
  query?: unknown;
  /** Path parameters, already percent-decoded. */
  params: string[];
  /** The Memory-Position header, validated, on routes that accept one. */
  position?: string;
  /** The namespace the request acts on (decided where it was authenticated). */
  scope: NamespaceScope;
}

export interface Route {
  method: 'get' | 'post' | 'del';
  /** uWS pattern; `:name` segments become params in order. */
  path: string;
  /** Validator for the JSON body; routes without one (GET) ignore any body sent. */
  body?: Validator<TSchema>;
  /**
   * The route reads no field of its body: none, or an empty one, is fine, and one sent is only
   * checked for fields it must not hold (RestBinding.ignoredBody), then dropped.
   */
  bodyOptional?: boolean;
  /** Status of a successful response. */
  status: 200 | 201;
  /**
   * An operation's Answer, or a body sent as it is (an operator route's RawBody); at once, or a
   * promise when the operation waits on a thread.
   */
  handle(ops: OperationHandlers, input: RouteInput): RouteResult | Promise<RouteResult>;
  /** One line for the OpenAPI document. */
  summary?: string;
  /** Schema of the success body (OpenAPI; not enforced at run time). */
  response?: TSchema;
  /** Media type of the success body when it is not JSON (the handler returns a RawBody). */
  produces?: string;
  /** Path parameter schemas by name (OpenAPI). */
  params?: TObject;
  /** Query parameter schemas by name (OpenAPI). */
  query?: TObject;
  /** Set when the query string is the operation's input: its validator (http/query.ts). */
  queryInput?: Validator<TObject>;
  /** A probe's route (health, metrics, the OpenAPI document): any query string is ignored, not refused. */
  ignoresQuery?: true;
  /** Error codes particular to this route, beyond those any route can answer (OpenAPI). */
  errors?: readonly ErrorCode[];
  /** Answers the Memory-Position header ('returned'), or reads it from the request ('accepted'). */
  position?: PositionUse;
}

export type RouteResult = Answer<unknown> | RawBody;

/** Operations without input (health, stats, consolidate) are handed this. */
const NO_INPUT = Object.freeze({});

export function buildRoutes(): Route[] {
  return REST_BINDINGS.map(({ operation, binding }) => routeOf(operation, binding));
}

function routeOf(name: OperationName, binding: RestBinding): Route {
  const operation: OperationDeclaration = OPERATIONS[name];
  const bodySchema = binding.body === undefined ? operation.input : binding.body;
  // The input field each path parameter fills, in path order (uWS numbers them so).
  const names = [...binding.path.matchAll(/:(\w+)/g)].map((match) => match[1]);
  const fields = names.map((param) => binding.params?.[param] ?? param);
  const queryIsInput = bodySchema === null && names.length === 0 && binding.query === operation.input;
  // A route that reads no body still refuses one with fields it does not take: a client that
  // believes `POST /v1/consolidate {"entity": …}` narrows the run must hear that it does not.
  const checkedBody = bodySchema ?? (binding.method === 'get' ? null : binding.ignoredBody ?? EmptyBody);
  return {
    method: binding.method === 'delete' ? 'del' : binding.method,
    path: binding.path,
    status: binding.status ?? 200,
    summary: binding.summary,
    response: operation.output,
    errors: operation.errors,
    ...(operation.position ? { position: operation.position } : {}),
    ...(checkedBody ? { body: compileValidator(checkedBody) } : {}),
    ...(checkedBody && !bodySchema ? { bodyOptional: true } : {}),
    ...(names.length > 0
      ? { params: Type.Object(Object.fromEntries(names.map((param, i) => [param, operation.input.properties[fields[i]]]))) }
      : {}),
    ...(binding.query ? { query: binding.query } : {}),
    ...(binding.ignoresQuery ? { ignoresQuery: true } : {}),
    ...(queryIsInput ? { queryInput: compileValidator(operation.input, 'query') } : {}),
    handle: queryIsInput ? (ops, request) => invoke(ops, name, request.query, contextOf(request)) : handlerOf(name, operation, bodySchema !== null, fields),
  };
}

/** The request's context for the handler (the scope itself when there is no position to add). */
const contextOf = ({ position, scope }: RouteInput): RequestContext => (position === undefined ? scope : { ...scope, position });

/** How a request becomes the operation's input (see RestBinding.params). */
function handlerOf(name: OperationName, operation: OperationDeclaration, hasBody: boolean, fields: string[]): Route['handle'] {
  if (fields.length === 0) {
    return hasBody
      ? (ops, request) => invoke(ops, name, request.body, contextOf(request))
      : (ops, request) => invoke(ops, name, NO_INPUT, contextOf(request));
  }
  /**
   * `into` (a fresh copy of the validated body, or a new object) with the path's fields set. A
   * body may repeat a path field (episode_id, as some SDKs send it) only with the same value.
   */
  const withPath = (into: Record<string, unknown>, params: string[]) => {
    for (let i = 0; i < fields.length; i++) {
      if (into[fields[i]] !== undefined && into[fields[i]] !== params[i]) throw fail.pathMismatch(fields[i]);
      into[fields[i]] = params[i];
    }
    return into;
  };
  if (hasBody) return (ops, request) => invoke(ops, name, withPath({ ...request.body }, request.params), contextOf(request));
  // The path is the whole input: it goes through the input schema, as the MCP tool's arguments do.
  const input = compileValidator(operation.input, 'params');
  return (ops, request) => invoke(ops, name, input.parse(withPath({}, request.params)), contextOf(request));
}
