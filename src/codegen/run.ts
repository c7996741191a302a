// `npm run generate`: writes the files generated from the operation declarations — the
// standalone client's types and tables, and the API reference (docs/api.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { clientFiles, REPOSITORY } from './client-module.js';

const files: Record<string, string> = { ...clientFiles() };
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(REPOSITORY, path)), { recursive: true });
  writeFileSync(join(REPOSITORY, path), text);
  console.log(`wrote ${path}`);
}
