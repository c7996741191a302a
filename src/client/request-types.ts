// What a caller sends to each operation, under the names the client has always exported: fields
// with a default may be left out (the server fills them in). Aliases of the declarations'
// caller-side types, so they cannot drift from what the server accepts.
import type { OperationRequest } from '../shared/operations/index.js';

export type CreateEntityInput = OperationRequest<'createEntity'>;
export type RememberInput = OperationRequest<'remember'>;
export type RecallInput = OperationRequest<'recall'>;
export type RecallGroupedInput = OperationRequest<'recallGrouped'>;
export type StartEpisodeInput = OperationRequest<'startEpisode'>;
/** The body of POST /v1/episodes/{id}/message (the id is in the path). */
export type EpisodeMessageInput = Omit<OperationRequest<'addMessage'>, 'episode_id'>;
/** The body of POST /v1/episodes/{id}/end (the id is in the path). */
export type EndEpisodeInput = Omit<OperationRequest<'endEpisode'>, 'episode_id'>;
export type InspectInput = OperationRequest<'inspect'>;
export type ListEntitiesInput = OperationRequest<'listEntities'>;
