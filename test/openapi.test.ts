// GET /v1/openapi.json: a valid OpenAPI 3.1 document (checked by an independent validator)
// describing every route with its request and response schemas — the same TypeBox objects
// the routes validate with.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { get, startTestService, type TestService } from './support/service.js';
import { buildRoutes } from '../src/http/routes.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';
import { VERSION } from '../src/service.js';

const KEY = 'openapi-key';
let t: TestService;
let doc: any;
before(async () => {
  t = await startTestService({ SERVICE_API_KEYS: KEY });
  const r = await get(t.base, '/v1/openapi.json', { authorization: `Bearer ${KEY}` });
  assert.equal(r.status, 200);
  doc = r.body;
});
after(() => t.close());

test('the document is valid OpenAPI 3.1', async () => {
  assert.match(doc.openapi, /^3\.1\./);
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, '3.1');
  assert.equal(doc.info.version, VERSION);
  // The validator is not vacuous: a broken operation is refused.
  const broken = structuredClone(doc);
  broken.paths['/v1/health'].get.responses = 'none';
  assert.equal((await new Validator().validate(broken)).valid, false);
});

test('every $ref resolves inside the document', () => {
  const refs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) key === '$ref' ? refs.push(value as string) : walk(value);
    }
  };
  walk(doc);
  assert.ok(refs.length > 20);
  for (const ref of refs) {
    const target = ref.replace(/^#\//, '').split('/').reduce((node: any, part) => node?.[part], doc);
    assert.ok(target, `${ref} resolves`);
  }
});

const deref = (schema: any) => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);

test('every route is described with its request and response schemas', () => {
  const routes = buildRoutes();
  const operator = [['get', '/metrics'], ['get', '/v1/openapi.json']];
  const described = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.keys(ops).map((m) => `${m} ${path}`));
  const expected = [
    ...routes.map((r) => `${r.method === 'del' ? 'delete' : r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    ...operator.map(([m, p]) => `${m} ${p}`),
  ];
  assert.deepEqual(described.sort(), expected.sort());

  for (const route of routes) {
    const op = doc.paths[route.path.replace(/:(\w+)/g, '{$1}')][route.method === 'del' ? 'delete' : route.method];
    const name = `${route.method} ${route.path}`;
    assert.equal(typeof op.operationId, 'string', name);
    if (route.body) {
      const schema = deref(op.requestBody.content['application/json'].schema);
      assert.deepEqual(schema, JSON.parse(JSON.stringify(route.body.schema)), `${name}: request schema is the validator's`);
      for (const status of ['400', '413', '422']) assert.ok(op.responses[status], `${name} documents ${status}`);
    } else {
      assert.equal(op.requestBody, undefined, `${name} takes no body`);
    }
    const success = op.responses[String(route.status)];
    assert.ok(success, `${name} documents ${route.status}`);
    const schema = deref(success.content['application/json'].schema);
    assert.ok(route.response, `${name} has a response schema in the route table`);
    assert.deepEqual(schema, JSON.parse(JSON.stringify(route.response)), `${name}: response schema`);
    for (const status of ['401', '500', '503']) assert.ok(op.responses[status], `${name} documents ${status}`);
    for (const param of route.path.matchAll(/:(\w+)/g)) {
      assert.ok(op.parameters.some((p: any) => p.name === param[1] && p.in === 'path' && p.required), `${name} path parameter ${param[1]}`);
    }
    // Query parameters are the declared query schema's properties, with its schemas.
    for (const [param, schema] of Object.entries(route.query?.properties ?? {})) {
      const documented = op.parameters.find((p: any) => p.name === param && p.in === 'query');
      assert.ok(documented, `${name} query parameter ${param}`);
      assert.deepEqual(deref(documented.schema), JSON.parse(JSON.stringify(schema)), `${name} query parameter ${param} schema`);
    }
  }
  assert.deepEqual(doc.paths['/v1/entities'].get.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name).sort(), ['limit', 'offset', 'q']);
  // Every route takes the Memory-Namespace header (issue 25), and says what a bad one answers.
  assert.equal(doc.components.parameters.MemoryNamespace.name, 'Memory-Namespace');
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      assert.ok(op.parameters.some((p: any) => p.$ref === '#/components/parameters/MemoryNamespace'), `${method} ${path} documents Memory-Namespace`);
      assert.ok(op.responses['400'], `${method} ${path} documents 400 INVALID_NAMESPACE`);
      // Keys are set in this service: a bound key naming another namespace is refused.
      assert.ok(op.responses['403'], `${method} ${path} documents 403 NAMESPACE_FORBIDDEN`);
    }
  }
  assert.ok(doc.paths['/v1/snapshots/{snapshot_id}/restore'].post.responses['404']);
  assert.ok(doc.paths['/v1/snapshots/{snapshot_id}/restore'].post.responses['409']);
  // The documented error shape is the {error, code} every error response has.
  const error = doc.components.responses.NotFound.content['application/json'].schema;
  assert.deepEqual(deref(error).required, ['error']);
  assert.equal(deref(doc.paths['/metrics'].get.responses['200'].content['text/plain'].schema).type, 'string');
});

test('Memory-Position: answered by every write, accepted by every replica-served read, as declared', () => {
  const ref = (node: any) => node.$ref.replace(/^#\//, '').split('/').reduce((at: any, part: string) => at[part], doc);
  const routes = buildRoutes();
  for (const route of routes) {
    const op = doc.paths[route.path.replace(/:(\w+)/g, '{$1}')][route.method === 'del' ? 'delete' : route.method];
    const name = `${route.method} ${route.path}`;
    const answered = op.responses[String(route.status)].headers?.['Memory-Position'];
    const accepted = (op.parameters ?? []).filter((p: any) => p.$ref).map(ref).find((p: any) => p.name === 'Memory-Position');
    assert.equal(Boolean(answered), route.position === 'returned', `${name} answers the header`);
    assert.equal(Boolean(accepted), route.position === 'accepted', `${name} accepts the header`);
    if (answered) assert.match(ref(answered).description, /PostgreSQL only/);
    if (accepted) {
      assert.equal(accepted.in, 'header');
      assert.equal(accepted.required, false);
      assert.ok(new RegExp(accepted.schema.pattern).test('0/16B3748') && !new RegExp(accepted.schema.pattern).test('nope'));
      assert.ok(op.responses['400'], `${name} documents the 400 of a malformed header`);
    }
  }
  const accepting = routes.filter((r) => r.position === 'accepted').map((r) => r.path).sort();
  assert.deepEqual(accepting, ['/v1/recall', '/v1/recall_grouped'], 'the reads a replica serves (workers/postgres/replica.ts)');
  assert.ok(routes.filter((r) => r.position === 'returned').length >= 8);
});

test('bearer security is declared when keys are set, and only then', () => {
  assert.deepEqual(doc.security, [{ bearerAuth: [] }]);
  assert.equal(doc.components.securitySchemes.bearerAuth.scheme, 'bearer');
  const open = buildOpenApiDocument(buildRoutes(), { version: VERSION, auth: false, rateLimited: false }) as any;
  assert.equal(open.security, undefined);
  assert.equal(open.paths['/v1/health'].get.responses['401'], undefined);
});

test('the document itself needs the key', async () => {
  assert.equal((await get(t.base, '/v1/openapi.json')).status, 401);
});
