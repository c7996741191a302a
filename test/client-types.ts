// Compile-only: `npm run build` (tsc) fails if the client's public types break for a caller.
// Not a test file at run time; every check here is a type check.
import type {
  CreateEntityInput, EndEpisodeInput, EpisodeMessageInput, InspectInput, MemoryClient, OperationRequest,
  RecallGroupedInput, RecallInput, RememberInput, StartEpisodeInput,
} from '../src/client/index.js';
import type * as client from '../src/client/index.js';

// The names callers have always used, with only the required fields.
const entity: CreateEntityInput = { name: 'ada' };
const memory: RememberInput = { entity: 'ada', fact: 'likes tea' };
const recall: RecallInput = { query: 'tea' };
const grouped: RecallGroupedInput = { query: 'tea' };
const started: StartEpisodeInput = { participants: ['ada'] };
const message: EpisodeMessageInput = { role: 'user', content: 'hello' };
const ended: EndEpisodeInput = {};
const inspected: InspectInput = { entity: 'ada' };
const request: OperationRequest<'recall'> = recall;

// `Request` stays fetch's: the client exports no type of that name.
// @ts-expect-error -- no export named Request
type NoRequest = client.Request;

declare const memoryClient: MemoryClient;
export async function calls(): Promise<void> {
  await memoryClient.recall(recall);
  await memoryClient.recallGrouped(grouped);
  await memoryClient.remember(memory);
  // The query string is typed from the declaration: forget takes hard_delete, a boolean…
  await memoryClient.call('forget', { entity_name: 'ada', hard_delete: true });
  await memoryClient.forget({ entity_name: 'ada', hard_delete: true });
  // @ts-expect-error -- …not a string
  await memoryClient.call('forget', { entity_name: 'ada', hard_delete: 'yes' });
  // @ts-expect-error -- and recall takes no query string at all
  await memoryClient.call('recall', { query: 'tea', hard_delete: true });
}

export const used = [entity, memory, started, message, ended, inspected, request];
export type { NoRequest };

// The standalone client's generated types are the declarations' types: each operation's request,
// query string and answer accept exactly what the server's schemas do (both ways), so a declaration
// changed without `npm run generate` fails the build here.
import type {
  OperationName as DeclaredName, OperationQuery as DeclaredQuery, OperationRequest as DeclaredRequest, Output as DeclaredOutput,
} from '../src/shared/operations/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Agreement = {
  [K in DeclaredName]: [Same<client.OperationRequest<K>, DeclaredRequest<K>>, Same<client.OperationQuery<K>, DeclaredQuery<K>>, Same<client.Output<K>, DeclaredOutput<K>>]
};
export const sameOperations: Same<client.OperationName, DeclaredName> = true;
export const sameTypes: { [K in DeclaredName]: [true, true, true] } = null as unknown as Agreement;
