// Field defaults, written once: in the schema. Validation applies them (Value.Default in
// compileValidator), so code behind the validator receives every defaulted field filled in and
// its type says so — `Parsed<typeof RecallBody>` has `limit: number`, while callers (the
// client, `Static<>`) may still leave it out.
import Type, { type Static, type TObject, type TOptional, type TSchema } from 'typebox';

declare const DEFAULTED: unique symbol;

/** An optional field whose absence means `default` (a type-level mark; nothing at run time). */
export type TDefaulted<T extends TSchema = TSchema> = TOptional<T> & { readonly [DEFAULTED]: true };

/**
 * `schema`, optional, with `value` as its default. The schema is copied with its hidden TypeBox
 * keys (its kind) and any symbol annotations, so it validates exactly as before.
 */
export function withDefault<T extends TSchema>(schema: T, value: Static<T>): TDefaulted<T> {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as T & { default: unknown };
  copy.default = value;
  return Type.Optional(copy) as unknown as TDefaulted<T>;
}

/** The default a field declares. */
export function defaultOf<P extends Record<string, TSchema>, K extends keyof P & string>(schema: TObject<P>, field: K): Static<P[K]> {
  return (schema.properties[field] as { default?: unknown }).default as Static<P[K]>;
}

type DefaultedKeys<P> = { [K in keyof P]: P[K] extends { readonly [DEFAULTED]: true } ? K : never }[keyof P];

/** What validation hands on: the value's type with every defaulted field present. */
export type Parsed<T extends TSchema> = T extends TObject<infer P>
  ? Simplify<Omit<Static<T>, DefaultedKeys<P>> & { [K in DefaultedKeys<P> & keyof Static<T>]-?: Exclude<Static<T>[K], undefined> }>
  : Static<T>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
