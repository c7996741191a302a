// Health and counts: the service itself rather than any one memory.
import { EmptyBody, HealthResponse, ListNamespacesQuery, NamespacesResponse, StatsResponse } from '../schemas.js';
import { declareOperation, READS } from './declare.js';

export const health = declareOperation({
  name: 'health',
  input: EmptyBody,
  output: HealthResponse,
  // Once the writer thread has died, health answers its 503 too.
  errors: ['WRITER_UNAVAILABLE'],
  rest: [{ method: 'get', path: '/v1/health', body: null, summary: 'Liveness and version', ignoresQuery: true }],
});

export const stats = declareOperation({
  name: 'stats',
  input: EmptyBody,
  output: StatsResponse,
  errors: [],
  rest: [{ method: 'get', path: '/v1/stats', body: null, summary: 'Counts for the served namespace' }],
  mcp: {
    name: 'stats',
    title: 'Memory statistics',
    description:
      'Count what the memory store holds in this namespace. Takes no arguments. Returns {namespace, entities, ' +
      'episodic_memories, semantic_memories, procedural_memories}.',
    annotations: READS,
  },
});

export const listNamespaces = declareOperation({
  name: 'listNamespaces',
  input: ListNamespacesQuery,
  output: NamespacesResponse,
  // A key bound to a namespace may not see the others (not even their names).
  errors: ['NAMESPACE_FORBIDDEN'],
  rest: [{
    method: 'get', path: '/v1/namespaces', body: null, query: ListNamespacesQuery,
    summary: 'Namespaces with their counts, a page at a time in creation order (operator keys only)',
  }],
});
