// docs/api.md is the OpenAPI document the service serves, rendered: a reference entry that
// disagrees with the served document (a declaration changed without `npm run generate`, or the
// file edited by hand) fails here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_REFERENCE_PATH, renderApiReference } from '../src/codegen/api-reference.js';
import { REPOSITORY } from '../src/codegen/client-module.js';
import { get, startTestService, type TestService } from './support/service.js';

let t: TestService;
// The configuration the reference describes: the defaults (no keys, the rate limiter on).
before(async () => { t = await startTestService({ SERVICE_RATE_LIMIT: '300' }); });
after(async () => { await t.close(); });

test('docs/api.md is the served OpenAPI document, rendered', async () => {
  const served = await get(t.base, '/v1/openapi.json');
  assert.equal(served.status, 200);
  const documented = readFileSync(join(REPOSITORY, API_REFERENCE_PATH), 'utf8');
  const expected = renderApiReference(served.body);
  if (documented !== expected) {
    const a = documented.split('\n');
    const b = expected.split('\n');
    const line = a.findIndex((text, i) => text !== b[i]);
    assert.fail(`${API_REFERENCE_PATH} disagrees with GET /v1/openapi.json from line ${line + 1}:\n  documented: ${a[line]}\n  served:     ${b[line]}\n(run npm run generate)`);
  }
});

test('every served route has its entry in the reference', async () => {
  const served = (await get(t.base, '/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const documented = readFileSync(join(REPOSITORY, API_REFERENCE_PATH), 'utf8');
  for (const [path, methods] of Object.entries(served.paths)) {
    for (const method of Object.keys(methods)) assert.ok(documented.includes(`\n## ${method.toUpperCase()} ${path}\n`), `${method} ${path}`);
  }
});
