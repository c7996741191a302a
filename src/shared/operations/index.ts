// Every operation of the service, by name, collected from the declaration files: a declaration
// exported from one of them is served (REST, MCP, OpenAPI) and callable from the client with no
// other list to edit. The types here give each surface its input, output and handler types.
import type { Static, TObject, TSchema } from 'typebox';
import type { Parsed } from '../defaults.js';
import type { OperationDeclaration, RestBinding } from './declare.js';
import * as entities from './entities.js';
import * as episodes from './episodes.js';
import * as memories from './memories.js';
import * as status from './status.js';
import * as snapshots from './snapshots.js';

export type { McpBinding, OperationDeclaration, PositionUse, RestBinding, ToolAnnotations } from './declare.js';

type Exported = (typeof status)[keyof typeof status] | (typeof entities)[keyof typeof entities]
  | (typeof memories)[keyof typeof memories] | (typeof episodes)[keyof typeof episodes]
  | (typeof snapshots)[keyof typeof snapshots];
type Declared = Extract<Exported, OperationDeclaration<string, TObject, TSchema>>;

const isDeclaration = (value: unknown): value is Declared =>
  typeof value === 'object' && value !== null && 'rest' in value && 'input' in value;

export const OPERATIONS = Object.freeze(Object.fromEntries(
  [status, entities, memories, episodes, snapshots].flatMap((group) => Object.values(group)).filter(isDeclaration).map((d) => [d.name, d]),
)) as { readonly [D in Declared as D['name']]: D };

export type OperationName = keyof typeof OPERATIONS;
export type Operation<K extends OperationName> = (typeof OPERATIONS)[K];
/** What a caller sends: fields with a default may be left out. */
export type OperationRequest<K extends OperationName> = Static<Operation<K>['input']>;
/** The query string a caller may send on the operation's first route (never: none). */
export type OperationQuery<K extends OperationName> =
  Operation<K>['rest'][0] extends { query: infer Q extends TObject } ? Static<Q> : never;
/** What the handler receives: validated, every default applied. */
export type Input<K extends OperationName> = Parsed<Operation<K>['input']>;
export type Output<K extends OperationName> = Static<Operation<K>['output']>;

export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** Each REST route with the operation it serves, in declaration order. */
export const REST_BINDINGS: readonly { operation: OperationName; binding: RestBinding }[] =
  OPERATION_NAMES.flatMap((operation) => OPERATIONS[operation].rest.map((binding) => ({ operation, binding })));
