// What a namespace name may be, wherever one is given: the Memory-Namespace header, a key's
// binding (SERVICE_API_KEYS `key=namespace`, the keys file), the CLI's --namespace. A name is
// compared byte for byte, so anything that could make two spellings of one name look alike, or
// break a log line, is refused rather than normalised.
export const NAMESPACE_MAX_CHARS = 128;

/** Why `name` is not a namespace name, or null when it is one. */
export function namespaceNameProblem(name: string): string | null {
  if (name.length === 0) return 'is empty';
  if ([...name].length > NAMESPACE_MAX_CHARS) return `is longer than ${NAMESPACE_MAX_CHARS} characters`;
  // C0, DEL and C1 controls; U+FFFD is what invalid UTF-8 bytes decode to.
  if (/[\u0000-\u001f\u007f-\u009f]/u.test(name)) return 'holds a control character';
  if (name.includes('\uFFFD')) return 'is not valid UTF-8';
  if (name.trim() !== name) return 'starts or ends with whitespace';
  return null;
}

/** The namespace a request acts on, and whether its key may name any namespace (an operator key, or auth off). */
export interface NamespaceScope {
  readonly namespace: string;
  readonly operator: boolean;
}
