// The contract between the surfaces (REST, MCP) and the use cases: one handler per declared
// operation (shared/operations/), named after it and typed from its declaration, so a declaration
// without its handler does not compile; both surfaces call it through `invoke` with input already
// validated and defaulted, and serve the same Answer. Besides the JSON itself an Answer carries
// what the surfaces tell the caller next to the JSON, never inside it (the spec fixes the JSON's
// shape): that memories were left out to fit the response budget (REST: X-Result-Truncated; MCP:
// a note in the text content), and the WAL position of the commit that stored a write (REST:
// the Memory-Position header; MCP: the result's `_meta`), for read-your-writes across nodes.
import type { Input, OperationName, Output } from '../../shared/operations/index.js';
import type { JsonBytes } from '../../shared/protocol/pool.js';

interface Beside {
  /** Memories were left out to keep the answer within SERVICE_MAX_RESPONSE_BYTES. */
  readonly truncated?: boolean;
  /** PostgreSQL: the position of the commit of the write's last writer command (pg_lsn text). */
  readonly position?: string;
}

/**
 * Either the value, or the JSON a pool worker already serialised (recall, recall_grouped,
 * inspect): up to SERVICE_MAX_RESPONSE_BYTES that REST sends as they are, a socket-full at a
 * time, and MCP, which needs the value for structuredContent, parses once.
 */
export type Answer<T> = ValueAnswer<T> | SerialisedAnswer<T>;
export type ValueAnswer<T> = Beside & { readonly value: T; readonly json?: undefined };
export type SerialisedAnswer<T> = Beside & { readonly json: JsonBytes<T>; readonly value?: undefined };

/** An answer of a value; a write's names its commit's position when it has one. */
export function answerOf<T>(value: T, position?: string): ValueAnswer<T> {
  return position === undefined ? { value } : { value, position };
}

/** An answer the pool serialised, cut to the response budget or not. */
export function serialisedAnswer<T>(json: JsonBytes<T>, truncated: boolean): SerialisedAnswer<T> {
  return truncated ? { json, truncated } : { json };
}

const utf8 = new TextDecoder();

/** The answer as JSON text. */
export function jsonText(answer: Answer<unknown>): string {
  return answer.json ? utf8.decode(answer.json) : JSON.stringify(answer.value);
}

/** The answer's value; `text`: its JSON text when already decoded. */
export function valueOf<T>(answer: Answer<T>, text?: string): T {
  return answer.json ? (JSON.parse(text ?? utf8.decode(answer.json)) as T) : (answer.value as T);
}

/**
 * The namespace a request acts on, resolved once where it was authenticated (http/namespace-scope.ts):
 * its key's, or — for an operator key or with auth off — the Memory-Namespace header's, else
 * SERVICE_NAMESPACE. `operator`: the key is bound to no namespace (it may name any).
 */
import type { NamespaceScope } from '../../shared/namespace-name.js';
export type { NamespaceScope };

/** What a request says beside its input, whichever surface it came through. */
export interface RequestContext extends NamespaceScope {
  /** The caller's WAL position (pg_lsn text, validated), on operations declared `position: 'accepted'`. */
  position?: string;
}

/** Synchronous where the answer is at hand (health: answered before uWS returns), else a promise. */
export type OperationHandlers = {
  [K in OperationName]: (input: Input<K>, request: RequestContext) => Answer<Output<K>> | Promise<Answer<Output<K>>>;
};

/** Calls the handler of `name` with input the caller has validated against its declaration. */
export function invoke(
  ops: OperationHandlers, name: OperationName, input: unknown, request: RequestContext,
): Answer<unknown> | Promise<Answer<unknown>> {
  return (ops[name] as (input: unknown, request: RequestContext) => Answer<unknown> | Promise<Answer<unknown>>).call(ops, input, request);
}
