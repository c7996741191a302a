// Entities: creating one, reading what is known about one, forgetting one.
import {
  CreateEntityBody, Entity, ForgetBody, ForgetParams, ForgetQuery, ForgetResponse, InspectBody, InspectResponse, MAX_LIMIT,
  ListEntitiesQuery, ListEntitiesResponse,
} from '../schemas.js';
import { defaultOf } from '../defaults.js';
import { declareOperation, READS, WRITES } from './declare.js';

export const createEntity = declareOperation({
  name: 'createEntity',
  input: CreateEntityBody,
  output: Entity,
  position: 'returned',
  errors: ['STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{ method: 'post', path: '/v1/entities', status: 201, summary: 'Create an entity, or return the existing one of that name' }],
  mcp: {
    name: 'create_entity',
    title: 'Create an entity',
    description:
      'Create a named entity, or return it if it already exists. kind is one of "user", "agent", "team", "tool" ' +
      `(default "${defaultOf(CreateEntityBody, 'kind')}"). Not required before remember or episode_start (they create ` +
      'entities on first use); use it to give an entity another kind. Returns {id, name, kind}.',
    annotations: { ...WRITES, idempotentHint: true },
  },
});

export const forget = declareOperation({
  name: 'forget',
  input: ForgetParams,
  output: ForgetResponse,
  position: 'returned',
  errors: ['NOT_FOUND', 'ENTITY_BUSY', 'SNAPSHOT_FAILED', 'STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{
    method: 'delete', path: '/v1/entities/:entity_name', body: null, params: { entity_name: 'entity_name' }, query: ForgetQuery, ignoredBody: ForgetBody,
    summary: "Delete an entity's memories after writing a recovery snapshot",
  }],
  mcp: {
    name: 'forget',
    title: 'Forget an entity',
    description:
      'Delete ALL active memories of one entity (as owner or episode participant). Use only when the user asks for ' +
      'their data to be forgotten or the memories are clearly wrong; it cannot be undone from here. A recovery ' +
      'snapshot is written first (for operators); if it cannot be written nothing is deleted. Returns ' +
      '{forgotten_count, snapshot?}; snapshot is omitted when there was nothing to delete. The entity itself goes too: ' +
      'forgetting it again fails with "not found".',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
});

export const inspect = declareOperation({
  name: 'inspect',
  input: InspectBody,
  output: InspectResponse,
  errors: ['NOT_FOUND'],
  rest: [{ method: 'post', path: '/v1/inspect', summary: "An entity's most recent memories, by type" }],
  mcp: {
    name: 'inspect',
    title: 'Inspect an entity',
    description:
      'List the most recent active memories of one entity, newest first, split by type: returns {entity, episodic, ' +
      `semantic, procedural, contradictions} (contradictions: pairs of the listed facts that conflict). limit (default ${defaultOf(InspectBody, 'limit')}, max ${MAX_LIMIT}) caps the total. Use it to ` +
      'review everything known about someone rather than to answer a specific question (use recall for that). Fails ' +
      'with "not found" for an unknown entity.',
    annotations: READS,
  },
});

/** The console's entity list (issue 15; not in the spec). The query string is the input. No MCP tool: agents have recall and inspect. */
export const listEntities = declareOperation({
  name: 'listEntities',
  input: ListEntitiesQuery,
  output: ListEntitiesResponse,
  errors: [],
  rest: [{
    method: 'get', path: '/v1/entities', body: null, query: ListEntitiesQuery,
    summary: 'Entities by name, a page at a time (q: name contains, any case)',
  }],
});
