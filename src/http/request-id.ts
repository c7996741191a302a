// Request ids tie a client's report to our log lines. A caller's X-Request-Id is kept when it
// is a plain token (so ids can be traced through a proxy or another service); anything else —
// too long, spaces, control characters that could forge log lines — is replaced by a new one.
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

const SANE = /^[A-Za-z0-9._:\-]{1,128}$/;

/**
 * The id for this request. `isSecret` lets the caller veto an id that is a configured API key:
 * a client that misplaces its key in this header must not see it copied into logs.
 */
export function requestIdFrom(incoming: string, isSecret: (value: string) => boolean = () => false): string {
  return SANE.test(incoming) && !isSecret(incoming) ? incoming : randomUUID();
}
