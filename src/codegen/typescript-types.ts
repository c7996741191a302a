// TypeScript type text for a JSON Schema, for the subset the service's TypeBox schemas emit
// (object, array, string, number, integer, boolean, null, enum, const, anyOf, patternProperties).
// Named schemas are referred to by name, so a generated module reads like the hand-written types
// it replaces. An unknown construct is an error, not `unknown`: a new kind of schema must be
// taught here rather than silently lose its type.

export type JsonSchema = Record<string, unknown>;

/** Schema object → the type name to refer to it by (identity, not structure). */
export type SchemaNames = ReadonlyMap<object, string>;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

export function typeText(schema: JsonSchema, names: SchemaNames, indent = '', top?: object): string {
  const named = names.get(schema);
  if (named !== undefined && schema !== top) return named;
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  if (Array.isArray(schema.anyOf)) {
    return (schema.anyOf as JsonSchema[]).map((member) => {
      const text = typeText(member, names, indent);
      return /\|/.test(text) && !text.startsWith('{') ? `(${text})` : text;
    }).join(' | ');
  }
  switch (schema.type) {
    case 'string': return 'string';
    case 'number':
    case 'integer': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': {
      const item = typeText(schema.items as JsonSchema, names, indent);
      return /[| ]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object': return objectText(schema, names, indent);
    default: throw new Error(`no TypeScript type for JSON Schema ${JSON.stringify(schema).slice(0, 200)}`);
  }
}

function objectText(schema: JsonSchema, names: SchemaNames, indent: string): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const patterns = Object.values((schema.patternProperties ?? {}) as Record<string, JsonSchema>);
  if (patterns.length === 1 && Object.keys(properties).length === 0) return `Record<string, ${typeText(patterns[0], names, indent)}>`;
  if (patterns.length > 0) throw new Error('no TypeScript type for an object with both properties and patternProperties');
  const entries = Object.entries(properties);
  // TypeBox's Static of an empty object, so both sides accept the same values.
  if (entries.length === 0) return 'object';
  const inner = `${indent}  `;
  const lines = entries.map(([key, value]) => {
    const doc = typeof value.description === 'string' ? `${inner}/** ${value.description.replace(/\*\//g, '*\\/')} */\n` : '';
    const name = IDENTIFIER.test(key) ? key : JSON.stringify(key);
    return `${doc}${inner}${name}${required.has(key) ? '' : '?'}: ${typeText(value, names, inner)};`;
  });
  return `{\n${lines.join('\n')}\n${indent}}`;
}
