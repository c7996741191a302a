// A typo must never widen a request: `{"query": …, "entitiy": "maria"}` read as a recall of every
// entity, `{"conf": 0.1}` as the default confidence. So every object an operation takes — its
// body, its query string, its MCP arguments — is closed (`additionalProperties: false`), set here
// for every declaration at once (declare.ts) rather than schema by schema, so a field or an
// operation added later is closed without anyone remembering to. The validator reports an
// unknown field as 400 UNKNOWN_FIELD naming it (validation.ts); OpenAPI and the MCP tool list
// show the closed schemas, since they are these very objects.
// The schemas are closed in place: routes and the OpenAPI document find schemas by identity
// (a route whose query is its input; named components).
import type { TSchema } from 'typebox';

type Node = Record<string, unknown>;

/** `schema` with every object schema in it closed (unless it already says what extra properties may be); idempotent. */
export function closeObjects<T extends TSchema>(schema: T): T {
  close(schema as unknown as Node);
  return schema;
}

function close(node: Node): void {
  if (node.type === 'object' && node.properties !== undefined && !('additionalProperties' in node)) node.additionalProperties = false;
  for (const key of ['properties', 'patternProperties'] as const) {
    const children = node[key] as Record<string, Node> | undefined;
    if (children) for (const child of Object.values(children)) close(child);
  }
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    const value = node[key] as Node | Node[] | undefined;
    if (Array.isArray(value)) value.forEach(close);
    else if (value && typeof value === 'object') close(value);
  }
}
