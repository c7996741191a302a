// The contract between the declared operations (shared/operations/) and the surfaces that serve
// them: one handler per operation, named after it and typed from its declaration, so a
// declaration without its handler does not compile. REST routes and MCP tools both call them
// through `invoke`, with input already validated and defaulted, and read the same Answer.
import type { Input, OperationName, Output } from '../../shared/operations/index.js';
import type { Answer } from './answer.js';

/** What a request says beside its input, whichever surface it came through. */
export interface RequestContext {
  /** The caller's WAL position (pg_lsn text, validated), on operations declared `position: 'accepted'`. */
  position?: string;
}

/** Synchronous where the answer is at hand (health: answered before uWS returns), else a promise. */
export type OperationHandlers = {
  [K in OperationName]: (input: Input<K>, request: RequestContext) => Answer<Output<K>> | Promise<Answer<Output<K>>>;
};

const NO_CONTEXT: RequestContext = Object.freeze({});

/** Calls the handler of `name` with input the caller has validated against its declaration. */
export function invoke(
  ops: OperationHandlers, name: OperationName, input: unknown, request: RequestContext = NO_CONTEXT,
): Answer<unknown> | Promise<Answer<unknown>> {
  return (ops[name] as (input: unknown, request: RequestContext) => Answer<unknown> | Promise<Answer<unknown>>).call(ops, input, request);
}
