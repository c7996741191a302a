// The namespace a request acts on, decided once, where it is authenticated, for REST and MCP
// alike: a key bound to a namespace acts on it and nothing else (naming another is 403, whether
// or not that namespace exists, so a bound key cannot even probe for names); an operator key, or
// any request while auth is off, acts on the Memory-Namespace header's namespace, else on
// SERVICE_NAMESPACE. A header that is not a clean name is refused (400), never trimmed or guessed.
import { fail } from '../shared/errors.js';
import { namespaceNameProblem } from '../shared/namespace-name.js';
import type { NamespaceScope } from '../core/operations/contract.js';
import type { ApiKey } from './auth.js';

export const NAMESPACE_HEADER = 'Memory-Namespace';
/** uWS (and captureRequest) hand header names over lower-cased. */
export const NAMESPACE_HEADER_LOWER = NAMESPACE_HEADER.toLowerCase();

/**
 * `named`: every Memory-Namespace header the request carried (repeated headers each count).
 * `key`: the authenticated key, or null with auth off.
 */
export function resolveScope(named: readonly string[], key: ApiKey | null, serviceNamespace: string): NamespaceScope {
  let header: string | undefined;
  if (named.length > 0) {
    header = named[0];
    // Repeated headers that disagree: which one a proxy or the client meant is unknowable.
    if (named.some((value) => value !== header)) throw fail.invalidNamespace('is given more than once, with different values');
    const problem = namespaceNameProblem(header!);
    if (problem) throw fail.invalidNamespace(problem);
  }
  const bound = key?.namespace ?? null;
  if (bound !== null) {
    if (header !== undefined && header !== bound) throw fail.namespaceForbidden(bound);
    return { namespace: bound, operator: false };
  }
  return { namespace: header ?? serviceNamespace, operator: true };
}
