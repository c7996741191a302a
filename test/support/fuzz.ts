// A seeded request fuzzer driven by the service's own descriptions of itself: the OpenAPI
// document (every REST route, its path parameters and body schema) and the MCP tools/list
// (every tool's input schema). Each case starts from a valid request and breaks it one way —
// wrong JSON types, huge or negative numbers, odd unicode, nulls, extra or missing fields,
// truncated or deeply nested JSON, wrong content types, odd path segments, wrong methods.
// The same seed always produces the same requests, so a failure can be replayed.

// The bench corpus's seeded mulberry32: one generator for every deterministic input.
import { rng } from '../../bench/lib/corpus.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any>;

export interface FuzzCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What was done to the valid request (for the failure report). */
  mutation: string;
}


const ODD_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff\ud800', '🙂'.repeat(50), '\u202e\u2066rtl', 'e\u0301\u0301\u0301',
  '\u200b\u200d\ufeff', '東京', '../../etc/passwd', '%00', '%zz', '<script>', "'; DROP TABLE memories; --", 'NaN', 'null',
  '\\', '"', '\n\r\t', 'x'.repeat(513), 'y'.repeat(100_001), 'OR AND NOT NEAR *', '"unterminated', 'MATCH', '{}',
];
const ODD_NUMBERS = [-1, 0, -0, 1.5, 1e308, -1e308, 2 ** 53 + 1, -(2 ** 31), 2 ** 31, 1001, 1e-320, 0.5, 100_000_000];
const ODD_SEGMENTS = ['', '%', '%zz', '%00', '%2F', '%2e%2e', '..', '.', 'x'.repeat(2000), '%F0%9F%99%82', '%C3%28', 'a%2Fb', '%ED%A0%80', ';', '*'];

/** Percent-encodes like encodeURIComponent; a lone surrogate (not encodable) goes out as its raw UTF-8 bytes. */
function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

export class RequestFuzzer {
  private readonly rnd: () => number;

  constructor(
    seed: number,
    private readonly openapi: any,
    private readonly tools: { name: string; inputSchema: Schema }[],
    /** Real ids (e.g. of episodes) to put in path parameters now and then. */
    private readonly knownIds: string[],
  ) {
    this.rnd = rng(seed);
  }

  next(): FuzzCase {
    return this.rnd() < 0.25 ? this.mcpCase() : this.restCase();
  }

  // ---------------------------------------------------------------- REST

  private restCase(): FuzzCase {
    const operations = Object.entries(this.openapi.paths as Record<string, Record<string, any>>)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
    const { path, method, op } = this.pick(operations);
    const schema = op.requestBody?.content?.['application/json']?.schema;
    const valid = schema ? this.valid(this.resolve(schema), 0) : undefined;
    // Segments are cut to 3,000 characters: uWS 20.30 drops a request head over 4 KiB when it
    // arrives split across reads (no answer at all; README, "What this uWS build drops silently"),
    // and whether loopback splits it is timing. Bodies still carry the 100,000-character strings.
    let url = path.replace(/\{[^}]+\}/g, () => encodeSegment(this.rnd() < 0.5 && this.knownIds.length ? this.pick(this.knownIds) : this.string()).slice(0, 3000));
    // Query parameters (GET /v1/entities): each present or not, a valid value or an odd one.
    const queryParams = ((op.parameters ?? []) as { name: string; in: string; schema: Schema }[]).filter((p) => p.in === 'query');
    if (queryParams.length > 0 && this.rnd() < 0.8) {
      const pairs = queryParams.filter(() => this.rnd() < 0.6).map((p) => {
        const value = this.rnd() < 0.5 ? this.valid(this.resolve(p.schema), 0) : this.pick(['', '-1', '0', '1e3', 'NaN', '99999999999999999999', '%zz', this.string()]);
        return `${encodeSegment(p.name)}=${encodeSegment(String(value)).slice(0, 1000)}`;
      });
      if (pairs.length > 0) url += `?${pairs.join('&')}`;
    }
    let httpMethod = method.toUpperCase();
    let mutation = 'valid';
    const roll = this.rnd();
    if (roll < 0.1) {
      url = path.replace(/\{[^}]+\}/g, () => this.pick(ODD_SEGMENTS));
      mutation = 'odd path segment';
    } else if (roll < 0.15) {
      url = `${url}${this.pick(['/', '//', '/extra', '?x=%zz', '?limit=-1', '#frag', '/..'])}`;
      mutation = 'odd path suffix';
    } else if (roll < 0.2) {
      httpMethod = this.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
      mutation = 'other method';
    }
    const body = valid === undefined && this.rnd() < 0.7 ? undefined : this.mutateBody(valid ?? {});
    return this.withContentType({ method: httpMethod, path: url, headers: {}, body: body?.text, mutation: `${mutation}; ${body?.mutation ?? 'no body'}` });
  }

  // ---------------------------------------------------------------- MCP

  private mcpCase(): FuzzCase {
    const tool = this.pick(this.tools);
    const args = this.valid(tool.inputSchema, 0);
    const roll = this.rnd();
    let message: Json;
    let mutation: string;
    if (roll < 0.6) {
      const mutated = this.mutateValue(args as Json);
      message = { jsonrpc: '2.0', id: this.int(1, 1e6), method: 'tools/call', params: { name: tool.name, arguments: mutated.value } };
      mutation = `mcp ${tool.name} arguments: ${mutated.mutation}`;
    } else if (roll < 0.8) {
      const mutated = this.mutateValue({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: args as Json } });
      message = mutated.value;
      mutation = `mcp envelope: ${mutated.mutation}`;
    } else {
      message = { jsonrpc: '2.0', id: 2, method: this.pick(['tools/list', 'initialize', 'ping', 'resources/list', 'nope', '']), params: this.pick([{}, null, [], 'x']) };
      mutation = 'mcp other method';
    }
    let text = JSON.stringify(message);
    if (this.rnd() < 0.1) {
      text = text.slice(0, this.int(0, text.length - 1));
      mutation += ', truncated';
    }
    const headers = { accept: this.pick(['application/json, text/event-stream', 'text/event-stream, application/json', 'application/json', '*/*', '']) };
    return this.withContentType({ method: this.rnd() < 0.95 ? 'POST' : this.pick(['GET', 'DELETE', 'PUT']), path: '/mcp', headers, body: text, mutation });
  }

  // ---------------------------------------------------------------- bodies

  private mutateBody(valid: Json): { text: string; mutation: string } {
    const roll = this.rnd();
    if (roll < 0.08) {
      const text = JSON.stringify(valid);
      return { text: text.slice(0, this.int(0, Math.max(0, text.length - 1))), mutation: 'truncated JSON' };
    }
    if (roll < 0.12) {
      const depth = this.pick([100, 1000, 10_000, 100_000]);
      return { text: '['.repeat(depth) + ']'.repeat(depth), mutation: `nested ${depth} deep` };
    }
    if (roll < 0.16) return { text: this.pick(['', 'null', '[]', '"x"', '1', 'true', '{', '}', '{"a":}', '\u0000', '{"__proto__":{"x":1}}']), mutation: 'not an object' };
    if (roll < 0.2) return { text: JSON.stringify({ items: Array.from({ length: this.int(1000, 50_000) }, (_, i) => i) }), mutation: 'large array' };
    const mutated = roll < 0.3 ? { value: valid, mutation: 'valid body' } : this.mutateValue(valid);
    return { text: JSON.stringify(mutated.value) ?? 'null', mutation: mutated.mutation };
  }

  /** One change somewhere in a JSON value. */
  private mutateValue(value: Json): { value: Json; mutation: string } {
    const copy = structuredClone(value);
    const fields = this.fieldPaths(copy);
    if (fields.length === 0 || this.rnd() < 0.1) return { value: this.odd(), mutation: 'replaced whole value' };
    const path = this.pick(fields);
    const parent = path.slice(0, -1).reduce<any>((node, key) => node[key], copy);
    const key = path[path.length - 1]!;
    const roll = this.rnd();
    if (roll < 0.15 && !Array.isArray(parent)) {
      delete parent[key];
      return { value: copy, mutation: `removed ${path.join('.')}` };
    }
    if (roll < 0.3 && !Array.isArray(parent)) {
      parent[this.pick(['extra', '__proto__', 'constructor', 'id', '', 'x'.repeat(300)])] = this.odd();
      return { value: copy, mutation: `extra field beside ${path.join('.')}` };
    }
    parent[key] = this.odd();
    return { value: copy, mutation: `${path.join('.')} = ${JSON.stringify(parent[key])?.slice(0, 60)}` };
  }

  private odd(): Json {
    const roll = this.rnd();
    if (roll < 0.35) return this.pick(ODD_STRINGS);
    if (roll < 0.6) return this.pick(ODD_NUMBERS);
    if (roll < 0.7) return null;
    if (roll < 0.8) return this.pick([true, false]);
    if (roll < 0.9) return this.pick([[], [null], [1, 'a'], Array.from({ length: 2000 }, () => 'x')]);
    return this.pick<Json>([{}, { a: 1 }, { content: null }]);
  }

  private fieldPaths(value: Json, prefix: (string | number)[] = [], depth = 0): (string | number)[][] {
    if (depth > 4 || value === null || typeof value !== 'object') return [];
    const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    return entries.flatMap(([key, child]) => [[...prefix, key], ...this.fieldPaths(child, [...prefix, key], depth + 1)]);
  }

  // ---------------------------------------------------------------- valid values from schemas

  private resolve(schema: Schema): Schema {
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop() as string;
      return this.resolve(this.openapi.components.schemas[name]);
    }
    return schema;
  }

  private valid(input: Schema, depth: number): Json {
    const schema = this.resolve(input);
    if (schema.anyOf || schema.oneOf) return this.valid(this.pick(schema.anyOf ?? schema.oneOf), depth + 1);
    if ('const' in schema) return schema.const;
    if (schema.enum) return this.pick(schema.enum);
    const type = Array.isArray(schema.type) ? this.pick(schema.type) : schema.type;
    switch (type) {
      case 'object': {
        const out: Record<string, Json> = {};
        for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
          if ((schema.required ?? []).includes(name) || this.rnd() < 0.5) out[name] = this.valid(property, depth + 1);
        }
        return out;
      }
      case 'array':
        return depth > 3 ? [] : Array.from({ length: this.int(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)) }, () => this.valid(schema.items ?? {}, depth + 1));
      case 'integer':
        return this.int(schema.minimum ?? 0, Math.min(schema.maximum ?? 100, 100));
      case 'number':
        return Math.min(schema.maximum ?? 1, Math.max(schema.minimum ?? 0, this.rnd()));
      case 'boolean':
        return this.rnd() < 0.5;
      case 'null':
        return null;
      case 'string':
        return schema.format === 'uuid' && this.knownIds.length ? this.pick(this.knownIds) : this.string();
      default:
        return this.string();
    }
  }

  private withContentType(c: FuzzCase): FuzzCase {
    if (c.body === undefined) return c;
    const roll = this.rnd();
    const type = roll < 0.85 ? 'application/json' : this.pick(['text/plain', '', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']);
    if (type) c.headers['content-type'] = type;
    if (roll >= 0.85) c.mutation += `, content-type "${type}"`;
    return c;
  }

  private string(): string {
    return this.rnd() < 0.7 ? `fuzz ${this.int(0, 50)} ${this.pick(['alice', 'bob', 'Berlin', 'lives in', 'likes tea'])}` : this.pick(ODD_STRINGS);
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.rnd() * (max - min + 1));
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rnd() * items.length)]!;
  }
}
