// The operation declarations (src/shared/operations/) are the one list every surface is built
// from, so what they say must hold together: unique names, path parameters that fill input
// fields, REST forms that take the same input as the MCP tool, and error codes that exist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATION_NAMES, OPERATIONS, REST_BINDINGS } from '../src/shared/operations/index.js';
import * as entities from '../src/shared/operations/entities.js';
import * as episodes from '../src/shared/operations/episodes.js';
import * as memories from '../src/shared/operations/memories.js';
import * as status from '../src/shared/operations/status.js';
import * as snapshots from '../src/shared/operations/snapshots.js';
import { ERROR_CODES, STATUS_TEXT } from '../src/shared/errors.js';
import { buildRoutes } from '../src/http/routes.js';
import { MEMORY_TOOLS } from '../src/http/mcp/tools.js';

test('every declaration is collected once, under its own name', () => {
  const declared = [status, entities, memories, episodes, snapshots].flatMap((group) => Object.values(group))
    .filter((value): value is { name: string } => typeof value === 'object' && value !== null && 'rest' in value);
  assert.equal(declared.length, OPERATION_NAMES.length, 'no two declarations share a name');
  for (const name of OPERATION_NAMES) assert.equal(OPERATIONS[name].name, name);
  const tools = MEMORY_TOOLS.map((tool) => tool.name);
  assert.equal(new Set(tools).size, tools.length, 'MCP tool names are unique');
});

test('routes are unique, and each REST form takes the whole input of its operation', () => {
  const routes = REST_BINDINGS.map(({ binding }) => `${binding.method} ${binding.path.replace(/:\w+/g, ':')}`);
  assert.equal(new Set(routes).size, routes.length, 'no two routes share a method and path');
  assert.equal(buildRoutes().length, routes.length);
  for (const { operation, binding } of REST_BINDINGS) {
    const input = OPERATIONS[operation].input;
    const where = `${binding.method} ${binding.path}`;
    const fromPath = [...binding.path.matchAll(/:(\w+)/g)].map(([, param]) => binding.params?.[param] ?? param);
    for (const field of fromPath) assert.ok(field in input.properties, `${where}: path fills input field ${field}`);
    const body = binding.body === undefined ? input : binding.body;
    const given = new Set([...fromPath, ...Object.keys(body?.properties ?? {})]);
    for (const field of input.required ?? []) assert.ok(given.has(field), `${where}: required input field ${field} comes from the path or body`);
    for (const field of given) assert.ok(field in input.properties, `${where}: ${field} is an input field`);
  }
});

test('declared error codes are distinct, and every status in the catalogue has its reason phrase', () => {
  // (That a declared code is in the catalogue, the compiler checks: `errors` is ErrorCode[].)
  for (const name of OPERATION_NAMES) {
    const { errors } = OPERATIONS[name];
    assert.equal(new Set(errors).size, errors.length, `${name} declares an error code twice`);
  }
  for (const [code, { status }] of Object.entries(ERROR_CODES)) assert.ok(STATUS_TEXT[status], `${code}: ${status}`);
});
