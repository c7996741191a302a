// `npm run generate`: writes the files generated from the operation declarations — the
// standalone client's types and tables, and the API reference (docs/api.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { API_REFERENCE_PATH, renderApiReference } from './api-reference.js';
import { clientFiles, REPOSITORY } from './client-module.js';
import { referenceDocument } from './served-document.js';

const files: Record<string, string> = { ...clientFiles(), [API_REFERENCE_PATH]: renderApiReference(referenceDocument()) };
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(REPOSITORY, path)), { recursive: true });
  writeFileSync(join(REPOSITORY, path), text);
  console.log(`wrote ${path}`);
}
