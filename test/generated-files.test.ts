// Files generated from the operation declarations are committed (the client package builds from
// them alone); each must be what `npm run generate` writes now, or a declaration changed
// without regenerating.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientFiles, REPOSITORY } from '../src/codegen/client-module.js';

test('the standalone client\'s generated files are up to date (npm run generate)', () => {
  for (const [path, text] of Object.entries(clientFiles())) {
    assert.ok(readFileSync(join(REPOSITORY, path), 'utf8') === text, `${path} is stale: run npm run generate`);
  }
});
