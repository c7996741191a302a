// Request validation in two passes, compiled once per schema:
//   1. the *shape* (JSON types and required fields) — failing it is 422, the body is malformed,
//      except an unknown field in a closed object (closed-schemas.ts): 400 UNKNOWN_FIELD naming it,
//      reported before anything else, since a misspelt field is usually why another is missing;
//   2. the full schema (ranges, enums, lengths)   — failing it is 400, a value is not allowed.
// The shape schema is derived from the full one by stripping value constraints, so each
// operation is still described exactly once.
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import type { TSchema, Static } from 'typebox';
import { fail, type FieldFault } from './errors.js';
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

/** The refusal the first error makes: its message, and the field it is about (FieldFault). */
interface Described {
  message: string;
  fault: FieldFault;
}

/** "valid_from: must match …", naming the field from the root; the fault holds the same as data. */
const atField = (instancePath: string, root: string, reason: string): Described => ({
  message: `${fieldName(instancePath, root)}: ${reason}`,
  fault: { path: fieldName(instancePath, ''), reason },
});

function describe(errors: SchemaError[], root: string): Described {
  const required = errors.find((e) => e.keyword === 'required');
  if (required) {
    const missing = (required.params.requiredProperties as string[] | undefined) ?? [];
    const where = required.instancePath === '' ? '' : ` in ${fieldName(required.instancePath, root)}`;
    const first = missing[0] === undefined ? required.instancePath : pointer(required.instancePath, missing[0]);
    return {
      message: `missing required field${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')}${where}`,
      fault: { path: fieldName(first, ''), reason: 'missing (required)' },
    };
  }
  // Type errors under a union arrive once per branch: merge them into "must be integer or null".
  const first = errors.find((e) => e.keyword !== 'anyOf') ?? errors[0];
  if (!first) return atField('', root, 'invalid');
  const samePath = errors.filter((e) => e.instancePath === first.instancePath && e.keyword === 'type');
  if (first.keyword === 'type' && samePath.length > 1) {
    return atField(first.instancePath, root, `must be ${samePath.map((e) => e.params.type).join(' or ')}`);
  }
  if (first.keyword === 'enum') {
    const allowed = (first.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
    return atField(first.instancePath, root, `must be one of ${allowed}`);
  }
  return atField(first.instancePath, root, first.message);
}

/**
 * The deepest nesting of arrays and objects a validated value may have (the body object itself
 * is level 1; no schema here needs more than 4). JSON.parse accepts far deeper input — a 20 KB
 * body can nest 10,000 levels — but copying or walking that recursively overflows the stack.
 */
export const MAX_NESTING_DEPTH = 64;

/** What a root's unknown members are called in messages. */
const MEMBER_NOUN: Readonly<Record<string, string>> = { query: 'query parameter', arguments: 'argument' };

/** The field of `known` closest to `name` by edit distance, when close enough to be a typo of it. */
function closest(name: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3 || a.length > 64 || b.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}

/** Names longer than this are cut in messages (a field name can be a megabyte long). */
const SHOWN_NAME_LENGTH = 64;
const shown = (name: string) => `'${name.length > SHOWN_NAME_LENGTH ? `${name.slice(0, SHOWN_NAME_LENGTH)}…` : name}'`;

/**
 * "unknown field 'entitiy' (did you mean 'entity'?); takes query, entity, limit, types, explain".
 * `names`: the unknown members of the object at `where`, whose schema lists `known`.
 */
export function unknownMembers(names: string[], known: string[], where: string, root: string): string {
  const noun = MEMBER_NOUN[root] ?? 'field';
  const place = where === '' ? '' : ` in ${where}`;
  const guess = names.length === 1 ? closest(names[0], known) : undefined;
  const listed = names.slice(0, 5).map(shown).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');
  return `unknown ${noun}${names.length > 1 ? 's' : ''} ${listed}${place}${guess ? ` (did you mean '${guess}'?)` : ''}; ` +
    (known.length === 0 ? `takes no ${noun}s` : `takes ${known.join(', ')}`);
}

/** The properties the schema declares at a JSON pointer into the value (through properties and items). */
function knownAt(schema: unknown, instancePath: string): string[] {
  let node = schema as JsonSchema | undefined;
  for (const part of instancePath.split('/').slice(1)) {
    if (!node) return [];
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    node = /^\d+$/.test(key) && node.items ? (node.items as JsonSchema) : (node.properties as Record<string, JsonSchema> | undefined)?.[key];
  }
  return Object.keys((node?.properties as object | undefined) ?? {});
}

/** The first closed object holding unknown members, as a 400 UNKNOWN_FIELD; null when there is none. */
function unknownFieldError(errors: SchemaError[], schema: unknown, root: string) {
  const found = errors.find((e) => e.keyword === 'additionalProperties');
  if (!found) return null;
  const names = (found.params.additionalProperties as string[] | undefined) ?? [];
  const where = found.instancePath === '' ? '' : fieldName(found.instancePath, root);
  return fail.unknownField(unknownMembers(names, knownAt(schema, found.instancePath), where, root));
}

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
        throw fail.nestedTooDeep(fieldName(found.tooDeep, root), MAX_NESTING_DEPTH, fieldName(found.tooDeep, ''));
      }
      if (!shape.Check(value)) {
        const errors = shape.Errors(value) as SchemaError[];
        const { message, fault } = describe(errors, root);
        throw unknownFieldError(errors, schema, root) ?? fail.malformed(message, fault);
      }
      if (!full.Check(value)) {
        // Union branches that fail on type are noise once the shape is known to be right.
        const all = full.Errors(value) as SchemaError[];
        const errors = all.filter((e) => !(e.keyword === 'type' && e.params.type === 'null'));
        // …unless null is all the field takes (cursor).
        const { message, fault } = describe(errors.length > 0 ? errors : all, root);
        throw fail.invalidValue(message, fault);
      }
      if (found.illFormed !== null) {
        throw fail.illFormedUnicode(fieldName(found.illFormed, root), fieldName(found.illFormed, ''));
      }
      return Value.Default(schema, structuredClone(value)) as Static<T>;
    },
  };
}
