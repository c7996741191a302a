// The REST surface: one entry per endpoint of the spec. Each route names the schema its body
// is validated with (compiled once, at start-up) and maps the request onto an operation. The
// same entries, with their response schemas, generate the OpenAPI document (openapi.ts).
import type { TObject, TSchema } from 'typebox';
import {
  ConsolidateResponse, CreateEntityBody, EndEpisodeBody, EndEpisodeByBody, EndEpisodeResponse, Entity, EpisodeMessageBody,
  EpisodeMessageByBody, EpisodeParams, ForgetParams, ForgetResponse, HealthResponse, InspectBody, InspectResponse,
  RecallBody, RecallGroupedBody, RecallGroupedResponse, RecallResponse, RememberBody, StartEpisodeBody,
  StartEpisodeResponse, StatsResponse, StatusResponse, StoredFact,
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
  /** A plain value is answered at once; a promise when the operation waits on a thread. */
  handle(ops: MemoryOperations, input: RouteInput): unknown;
  /** One line for the OpenAPI document. */
  summary?: string;
  /** Schema of the success body (OpenAPI; not enforced at run time). */
  response?: TSchema;
  /** Media type of the success body when it is not JSON (the handler returns a RawBody). */
  produces?: string;
  /** Path parameter schemas by name (OpenAPI; the handler checks them). */
  params?: TObject;
  /** Error statuses particular to this route, beyond those any route can return (OpenAPI). */
  errors?: number[];
}

export function buildRoutes(version: string): Route[] {
  const v = (schema: TSchema) => compileValidator(schema);
  // The path parameter goes through the schema the MCP `forget` tool uses, so both say the same.
  const forgetParams = compileValidator(ForgetParams, 'params');
  return [
    {
      method: 'get', path: '/v1/health', status: 200, response: HealthResponse, summary: 'Liveness and version',
      // Synchronous: answered before uWS returns (a throw is still mapped to its status).
      handle: (ops) => {
        ops.assertHealthy();
        return { status: 'ok', version };
      },
    },
    {
      method: 'post', path: '/v1/entities', body: v(CreateEntityBody), status: 201, response: Entity,
      errors: [507], summary: 'Create an entity, or return the existing one of that name',
      handle: (ops, { body }) => ops.createEntity(body),
    },
    {
      method: 'post', path: '/v1/remember', body: v(RememberBody), status: 201, response: StoredFact,
      errors: [507], summary: 'Store a semantic memory (fact) about an entity',
      handle: (ops, { body }) => ops.remember(body),
    },
    {
      method: 'post', path: '/v1/recall', body: v(RecallBody), status: 200, response: RecallResponse,
      summary: 'Search memories (fused signals), with contradictions among the returned facts',
      handle: (ops, { body }) => ops.recall(body),
    },
    {
      method: 'post', path: '/v1/recall_grouped', body: v(RecallGroupedBody), status: 200, response: RecallGroupedResponse,
      summary: 'Search memories, grouped by the episode (session) they came from',
      handle: (ops, { body }) => ops.recallGrouped(body),
    },
    {
      method: 'post', path: '/v1/episodes/start', body: v(StartEpisodeBody), status: 200, response: StartEpisodeResponse,
      errors: [507], summary: 'Start an episode between participants', handle: (ops, { body }) => ops.startEpisode(body),
    },
    {
      method: 'post', path: '/v1/episodes/:id/message', body: v(EpisodeMessageBody), status: 200, response: StatusResponse,
      params: EpisodeParams, errors: [404, 507], summary: 'Add a message to an active episode',
      handle: (ops, { body, params }) => ops.addMessage(params[0], body),
    },
    {
      method: 'post', path: '/v1/episodes/:id/end', body: v(EndEpisodeBody), status: 200, response: EndEpisodeResponse,
      params: EpisodeParams, errors: [404, 507], summary: 'End an episode and extract memories from it',
      handle: (ops, { body, params }) => ops.endEpisode(params[0], body),
    },
    // Compatibility with existing SDKs that put the episode id in the body.
    {
      method: 'post', path: '/v1/episodes/message', body: v(EpisodeMessageByBody), status: 200, response: StatusResponse,
      errors: [404, 507], summary: 'Add a message to an episode (episode id in the body)',
      handle: (ops, { body }) => ops.addMessage(body.episode_id, body),
    },
    {
      method: 'post', path: '/v1/episodes/end', body: v(EndEpisodeByBody), status: 200, response: EndEpisodeResponse,
      errors: [404, 507], summary: 'End an episode (episode id in the body)',
      handle: (ops, { body }) => ops.endEpisode(body.episode_id, body),
    },
    {
      // `hard_delete` in the query is accepted and ignored: every delete is snapshot-backed.
      method: 'del', path: '/v1/entities/:entity_name', status: 200, response: ForgetResponse,
      params: ForgetParams, errors: [404, 507], summary: "Delete an entity's memories after writing a recovery snapshot",
      handle: (ops, { params }) => ops.forget(forgetParams.parse({ entity_name: params[0] }).entity_name),
    },
    {
      method: 'post', path: '/v1/inspect', body: v(InspectBody), status: 200, response: InspectResponse,
      errors: [404], summary: "An entity's most recent memories, by type", handle: (ops, { body }) => ops.inspect(body),
    },
    {
      method: 'get', path: '/v1/stats', status: 200, response: StatsResponse, summary: 'Counts for the served namespace',
      handle: (ops) => ops.stats(),
    },
    {
      method: 'post', path: '/v1/consolidate', status: 200, response: ConsolidateResponse,
      summary: 'Promote repeated episodes, apply decay, archive weak memories', handle: (ops) => ops.consolidate(),
    },
  ];
}
