// The Python client (clients/python) and the Python agent example (examples/python-agent) against
// real services: this file starts them and runs the client's own unittest suite with Debian's
// python3 (no pip packages), which fails this test when any Python test fails, errors or skips.
// Two services: an open one (auth off, no rate limit) for the endpoints, and one with API keys, a
// 60-per-minute rate limit and a 64 KiB body limit for 401 / 413 / 429 and retries of a real 429.
// python3 absent: skipped with a message, unless PYTHON_CLIENT_REQUIRED=1 (.ci/run) makes that a failure.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { startTestService, type TestService } from './support/service.js';
import { onPostgres } from './support/test-backend.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLIENT_DIR = join(ROOT, 'clients/python');
/** Each rate-limit test spends the budget of its own key, so they cannot starve one another. */
const API_KEYS = ['py-key', 'py-limit-sync', 'py-limit-retry', 'py-limit-async'];
const RATE_LIMIT = 60;
const MAX_BODY_BYTES = 64 * 1024;

function python(): string | null {
  const probe = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 9))'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return null;
  return probe.stdout.trim() === 'True' ? 'python3' : null;
}

const interpreter = python();
const missing = interpreter === null ? 'python3 (>= 3.9) is not installed' : null;
if (missing && process.env.PYTHON_CLIENT_REQUIRED === '1') throw new Error(`PYTHON_CLIENT_REQUIRED=1 but ${missing}`);

let open: TestService;
let guarded: TestService;
before(async () => {
  if (missing) return;
  open = await startTestService();
  guarded = await startTestService({
    SERVICE_API_KEYS: API_KEYS.join(','),
    SERVICE_RATE_LIMIT: String(RATE_LIMIT),
    SERVICE_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
  });
});
after(async () => {
  await open?.close();
  await guarded?.close();
});

/** Runs python3 with the env the suite reads (tests/support.py), collecting its output. */
function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(interpreter!, args, {
      cwd: CLIENT_DIR,
      env: {
        ...process.env,
        PYTHONPATH: join(CLIENT_DIR, 'src'),
        PYTHONDONTWRITEBYTECODE: '1',
        MEMORY_RUNTIME_URL: open.base,
        MEMORY_RUNTIME_AUTH_URL: guarded.base,
        MEMORY_RUNTIME_API_KEYS: API_KEYS.join(','),
        MEMORY_RUNTIME_RATE_LIMIT: String(RATE_LIMIT),
        MEMORY_RUNTIME_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
        MEMORY_RUNTIME_BACKEND: onPostgres ? 'postgres' : 'sqlite',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

test('the Python client suite passes against the real service (every test run, none skipped)', { skip: missing ?? false }, async () => {
  const { code, output } = await run(['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v']);
  const ran = /^Ran (\d+) tests? in ([\d.]+)s$/m.exec(output);
  // The summary on the way out of the test: how many ran and how long, for the CI log.
  console.log(`# python client: ${ran ? `${ran[1]} tests in ${ran[2]} s` : 'no summary'}`);
  assert.equal(code, 0, `python3 -m unittest failed:\n${output}`);
  assert.ok(ran && Number(ran[1]) > 0, `no tests ran:\n${output}`);
  assert.doesNotMatch(output, /skipped=|expected failures=/, `some Python tests were skipped:\n${output}`);
});
