// The REST surface: one entry per endpoint of the spec. Each route names the schema its body
// is validated with (compiled once, at start-up) and maps the request onto an operation.
import type { TSchema } from 'typebox';
import {
  CreateEntityBody, EndEpisodeBody, EndEpisodeByBody, EpisodeMessageBody, EpisodeMessageByBody, ForgetParams, InspectBody,
  RecallBody, RecallGroupedBody, RememberBody, StartEpisodeBody,
} from '../shared/schemas.js';
import { compileValidator, type Validator } from '../shared/validation.js';
import type { MemoryOperations } from './operations.js';

export interface RouteInput {
  body: any;
  /** Path parameters, already percent-decoded. */
  params: string[];
}

export interface Route {
  method: 'get' | 'post' | 'del';
  /** uWS pattern; `:name` segments become params in order. */
  path: string;
  /** Validator for the JSON body; routes without one ignore any body sent. */
  body?: Validator<TSchema>;
  /** Status of a successful response. */
  status: 200 | 201;
  handle(ops: MemoryOperations, input: RouteInput): Promise<unknown>;
}

export function buildRoutes(version: string): Route[] {
  const v = (schema: TSchema) => compileValidator(schema);
  // The path parameter goes through the schema the MCP `forget` tool uses, so both say the same.
  const forgetParams = compileValidator(ForgetParams, 'params');
  return [
    { method: 'get', path: '/v1/health', status: 200, handle: async () => ({ status: 'ok', version }) },
    { method: 'post', path: '/v1/entities', body: v(CreateEntityBody), status: 201, handle: (ops, { body }) => ops.createEntity(body) },
    { method: 'post', path: '/v1/remember', body: v(RememberBody), status: 201, handle: (ops, { body }) => ops.remember(body) },
    { method: 'post', path: '/v1/recall', body: v(RecallBody), status: 200, handle: (ops, { body }) => ops.recall(body) },
    { method: 'post', path: '/v1/recall_grouped', body: v(RecallGroupedBody), status: 200, handle: (ops, { body }) => ops.recallGrouped(body) },
    { method: 'post', path: '/v1/episodes/start', body: v(StartEpisodeBody), status: 200, handle: (ops, { body }) => ops.startEpisode(body) },
    {
      method: 'post', path: '/v1/episodes/:id/message', body: v(EpisodeMessageBody), status: 200,
      handle: (ops, { body, params }) => ops.addMessage(params[0], body),
    },
    {
      method: 'post', path: '/v1/episodes/:id/end', body: v(EndEpisodeBody), status: 200,
      handle: (ops, { body, params }) => ops.endEpisode(params[0], body),
    },
    // Compatibility with existing SDKs that put the episode id in the body.
    {
      method: 'post', path: '/v1/episodes/message', body: v(EpisodeMessageByBody), status: 200,
      handle: (ops, { body }) => ops.addMessage(body.episode_id, body),
    },
    {
      method: 'post', path: '/v1/episodes/end', body: v(EndEpisodeByBody), status: 200,
      handle: (ops, { body }) => ops.endEpisode(body.episode_id, body),
    },
    {
      // `hard_delete` in the query is accepted and ignored: every delete is snapshot-backed.
      method: 'del', path: '/v1/entities/:entity_name', status: 200,
      handle: (ops, { params }) => ops.forget(forgetParams.parse({ entity_name: params[0] }).entity_name),
    },
    { method: 'post', path: '/v1/inspect', body: v(InspectBody), status: 200, handle: (ops, { body }) => ops.inspect(body) },
    { method: 'get', path: '/v1/stats', status: 200, handle: (ops) => ops.stats() },
    { method: 'post', path: '/v1/consolidate', status: 200, handle: (ops) => ops.consolidate() },
  ];
}
