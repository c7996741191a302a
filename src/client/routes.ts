// The client's route table: for each declared operation, the method and path of its first REST
// route, the path parameters it fills from request fields, and whether it sends a body. Plain
// data, not read from the declarations at run time, because the declarations hold TypeBox
// schemas and loading TypeBox (~380 modules) would make importing the client take tenths of a
// second. It cannot drift: the compiler requires an entry per operation (and the literal method
// and path where the declaration has them), and test/client.test.ts compares it with the
// declarations field by field.
import type { Operation, OperationName, PositionUse } from '../shared/operations/index.js';

type FirstRoute<K extends OperationName> = Operation<K>['rest'][0];

export interface ClientRoute<K extends OperationName = OperationName> {
  method: Uppercase<FirstRoute<K>['method']>;
  path: FirstRoute<K>['path'];
  /** Path parameter → the request field it is taken from. */
  params?: Readonly<Record<string, string>>;
  /** False when the route takes no body (the request's fields are all in the path or query). */
  body: boolean;
  /** As declared: answers a Memory-Position ('returned'), or takes one ('accepted'). */
  position?: PositionUse;
}

export const CLIENT_ROUTES: { readonly [K in OperationName]: ClientRoute<K> } = {
  health: { method: 'GET', path: '/v1/health', body: false },
  stats: { method: 'GET', path: '/v1/stats', body: false },
  createEntity: { method: 'POST', path: '/v1/entities', body: true, position: 'returned' },
  forget: { method: 'DELETE', path: '/v1/entities/:entity_name', params: { entity_name: 'entity_name' }, body: false, position: 'returned' },
  inspect: { method: 'POST', path: '/v1/inspect', body: true },
  listEntities: { method: 'GET', path: '/v1/entities', body: false },
  remember: { method: 'POST', path: '/v1/remember', body: true, position: 'returned' },
  recall: { method: 'POST', path: '/v1/recall', body: true, position: 'accepted' },
  recallGrouped: { method: 'POST', path: '/v1/recall_grouped', body: true, position: 'accepted' },
  consolidate: { method: 'POST', path: '/v1/consolidate', body: false, position: 'returned' },
  startEpisode: { method: 'POST', path: '/v1/episodes/start', body: true, position: 'returned' },
  addMessage: { method: 'POST', path: '/v1/episodes/:id/message', params: { id: 'episode_id' }, body: true, position: 'returned' },
  endEpisode: { method: 'POST', path: '/v1/episodes/:id/end', params: { id: 'episode_id' }, body: true, position: 'returned' },
  listSnapshots: { method: 'GET', path: '/v1/snapshots', body: false },
  restoreSnapshot: { method: 'POST', path: '/v1/snapshots/:snapshot_id/restore', body: false, position: 'returned' },
};

/** Left out of a recall, `limit` is this: the schema's default, which the server applies (checked by test). */
export const DEFAULT_RECALL_LIMIT = 5;
