// Query strings (GET /v1/entities?q=&limit=&offset=) validated with the route's TypeBox schema,
// like a body. Every value arrives as text, so a parameter the schema declares an integer is
// read as a number when it is written as one; anything else stays text and fails validation.
// Every failure is a 400 naming the parameter: a query has no JSON types to get wrong. On every
// other route a parameter the route does not list is refused too (a typo never widens a request:
// `?qq=maria` must not list every entity), while the values of listed ones are left alone.
import type { TObject } from 'typebox';
import { fail, ServiceError } from '../shared/errors.js';
import { unknownMembers, type Validator } from '../shared/validation.js';

const INTEGER = /^-?\d{1,16}$/;

export function parseQuery<T extends TObject>(raw: string, validator: Validator<T>): unknown {
  const values: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    if (Object.hasOwn(values, name)) throw fail.invalidValue(`query/${name}: given more than once`);
    const declared = validator.schema.properties[name] as { type?: unknown } | undefined;
    values[name] = declared?.type === 'integer' && INTEGER.test(value) ? Number(value) : value;
  }
  try {
    return validator.parse(values);
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'MALFORMED_BODY') throw fail.invalidValue(error.message);
    throw error;
  }
}

/** `undefined` once every parameter in `raw` is one `declared` lists (none when there is no schema). */
export function checkQueryNames(raw: string, declared: TObject | undefined): undefined {
  if (raw === '') return undefined;
  const known = Object.keys(declared?.properties ?? {});
  const unknown = [...new Set(new URLSearchParams(raw).keys())].filter((name) => !known.includes(name));
  if (unknown.length > 0) throw fail.unknownField(unknownMembers(unknown, known, '', 'query'));
  return undefined;
}
