// tsc compiles only TypeScript: the console's static files (src/console) are copied to
// dist/src/console, beside dist/src/http, where the service looks for them. The old copy is
// removed first so a file deleted from the sources is not served from a stale build.
import { cpSync, rmSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const target = new URL('dist/src/console/', root);
rmSync(target, { recursive: true, force: true });
cpSync(new URL('src/console/', root), target, { recursive: true });
