// The standalone client (clients/typescript) as a user gets it: `npm pack`, installed alone into
// an empty project with no registry (it has no dependencies to fetch), then imported there and
// used against a real service.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startTestService, tempDir, type TestService } from './support/service.js';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('../../clients/typescript/', import.meta.url));
let t: TestService;
let project: string;
before(async () => { t = await startTestService(); project = tempDir('memrt-client-'); });
after(async () => { await t.close(); rmSync(project, { recursive: true, force: true }); });

test('the client packs, installs with no dependencies and works on its own', async () => {
  const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 120_000 });
  const { stdout } = await npm(['pack', '--json', '--pack-destination', project], packageDir);
  const [packed] = JSON.parse(stdout) as { filename: string; size: number; files: { path: string }[] }[];
  assert.ok(packed.files.every((file) => /^(dist\/|package\.json$|README\.md$)/.test(file.path)), 'ships only its build');

  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
  await npm(['install', '--offline', join(project, packed.filename)], project);
  assert.deepEqual(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.')), ['@memory-runtime']);
  assert.deepEqual(readdirSync(join(project, 'node_modules/@memory-runtime')), ['client']);

  writeFileSync(join(project, 'use.mjs'), `
    import { MemoryClient, MemoryServiceError } from '@memory-runtime/client';
    const client = new MemoryClient({ baseUrl: process.argv[2] });
    await client.remember({ entity: 'pkg-user', fact: 'installed the client alone' });
    const { memories } = await client.recall({ query: 'installed alone', entity: 'pkg-user' });
    let status = 0;
    try { await client.inspect({ entity: 'nobody-here' }); } catch (e) { if (e instanceof MemoryServiceError) status = e.status; }
    console.log(JSON.stringify({ recalled: memories[0]?.content, status }));
  `);
  const used = await run(process.execPath, [join(project, 'use.mjs'), t.base], { cwd: project, timeout: 60_000 });
  assert.deepEqual(JSON.parse(used.stdout), { recalled: 'installed the client alone', status: 404 });
});
