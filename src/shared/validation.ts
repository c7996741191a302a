// Request validation in two passes, compiled once per schema:
//   1. the *shape* (JSON types and required fields) — failing it is 422, the body is malformed;
//   2. the full schema (ranges, enums, lengths)   — failing it is 400, a value is not allowed.
// The shape schema is derived from the full one by stripping value constraints, so each
// operation is still described exactly once.
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import type { TSchema, Static } from 'typebox';
import { fail } from './errors.js';
import { ANY_WRONG_VALUE_IS_400 } from './value-rules.js';

const VALUE_KEYWORDS = [
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems', 'uniqueItems', 'const', 'enum',
];

type JsonSchema = Record<string | symbol, unknown>;

/** A copy of `schema` keeping only JSON types and required fields. */
export function shapeOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(shapeOf);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as JsonSchema;
  if (source[ANY_WRONG_VALUE_IS_400] === true) return {};
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (VALUE_KEYWORDS.includes(key)) continue;
    out[key] = key === 'properties'
      ? Object.fromEntries(Object.entries(value as JsonSchema).map(([k, v]) => [k, shapeOf(v)]))
      : shapeOf(value);
  }
  // An enum or const still fixes the JSON type of its values.
  const fixed = (source.enum as unknown[] | undefined) ?? ('const' in source ? [source.const] : undefined);
  if (fixed && out.type === undefined) out.type = [...new Set(fixed.map(jsonType))];
  return out;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
}

/** "participants[2]" from "/participants/2". */
function fieldName(instancePath: string, root: string): string {
  if (instancePath === '') return root;
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part, i) => (/^\d+$/.test(part) ? `${acc}[${part}]` : i === 0 ? part : `${acc}.${part}`), '');
}

function describe(errors: SchemaError[], root: string): string {
  const required = errors.find((e) => e.keyword === 'required');
  if (required) {
    const missing = (required.params.requiredProperties as string[] | undefined) ?? [];
    const where = required.instancePath === '' ? '' : ` in ${fieldName(required.instancePath, root)}`;
    return `missing required field${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')}${where}`;
  }
  // Type errors under a union arrive once per branch: merge them into "must be integer or null".
  const first = errors.find((e) => e.keyword !== 'anyOf') ?? errors[0];
  if (!first) return `${root}: invalid`;
  const samePath = errors.filter((e) => e.instancePath === first.instancePath && e.keyword === 'type');
  if (first.keyword === 'type' && samePath.length > 1) {
    return `${fieldName(first.instancePath, root)}: must be ${samePath.map((e) => e.params.type).join(' or ')}`;
  }
  if (first.keyword === 'enum') {
    const allowed = (first.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
    return `${fieldName(first.instancePath, root)}: must be one of ${allowed}`;
  }
  return `${fieldName(first.instancePath, root)}: ${first.message}`;
}

/**
 * The deepest nesting of arrays and objects a validated value may have (the body object itself
 * is level 1; no schema here needs more than 4). JSON.parse accepts far deeper input — a 20 KB
 * body can nest 10,000 levels — but copying or walking that recursively overflows the stack.
 */
export const MAX_NESTING_DEPTH = 64;

interface Scan {
  /** The top-level field holding a part nested deeper than MAX_NESTING_DEPTH ('' for the value itself). */
  tooDeep: string | null;
  /** A string that is not well-formed UTF-16 (a lone surrogate, e.g. "\ud800"). */
  illFormed: string | null;
}

const pointer = (parent: string, key: string) => `${parent}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * One walk over a parsed body, as JSON pointers: nesting too deep, and strings that are not
 * well-formed UTF-16 — JSON escapes can spell lone surrogates, which storage would silently turn
 * into U+FFFD (so "\ud800" and "\udc00" would name the same entity). Iterative, so any depth is safe.
 */
function scan(value: unknown): Scan {
  const found: Scan = { tooDeep: null, illFormed: null };
  if (typeof value === 'string') {
    if (!value.isWellFormed()) found.illFormed = '';
    return found;
  }
  if (value === null || typeof value !== 'object') return found;
  const stack: Array<[object, number, string]> = [[value, 1, '']];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop()!;
    if (depth > MAX_NESTING_DEPTH) {
      const second = path.indexOf('/', 1);
      found.tooDeep = second === -1 ? path : path.slice(0, second);
      return found;
    }
    const keys = Array.isArray(node) ? null : Object.keys(node);
    const items: unknown[] = keys === null ? (node as unknown[]) : keys.map((key) => (node as Record<string, unknown>)[key]);
    for (let i = 0; i < items.length; i++) {
      const child = items[i];
      if (typeof child === 'string') {
        if (found.illFormed === null && !child.isWellFormed()) found.illFormed = pointer(path, keys === null ? String(i) : keys[i]);
      } else if (child !== null && typeof child === 'object') {
        stack.push([child, depth + 1, pointer(path, keys === null ? String(i) : keys[i])]);
      }
    }
  }
  return found;
}

export interface Validator<T extends TSchema> {
  readonly schema: T;
  /** Returns the value with defaults applied, or throws a ServiceError (422 or 400). */
  parse(value: unknown): Static<T>;
}

export function compileValidator<T extends TSchema>(schema: T, root = 'body'): Validator<T> {
  const shape = Compile(shapeOf(schema) as TSchema);
  const full = Compile(schema);
  return {
    schema,
    parse(value: unknown): Static<T> {
      const found = scan(value);
      if (found.tooDeep !== null) {
        throw fail.nestedTooDeep(fieldName(found.tooDeep, root), MAX_NESTING_DEPTH);
      }
      if (!shape.Check(value)) {
        throw fail.malformed(describe(shape.Errors(value) as SchemaError[], root));
      }
      if (!full.Check(value)) {
        // Union branches that fail on type are noise once the shape is known to be right.
        const errors = (full.Errors(value) as SchemaError[]).filter((e) => !(e.keyword === 'type' && e.params.type === 'null'));
        throw fail.invalidValue(describe(errors, root));
      }
      if (found.illFormed !== null) {
        throw fail.illFormedUnicode(fieldName(found.illFormed, root));
      }
      return Value.Default(schema, structuredClone(value)) as Static<T>;
    },
  };
}
