// Runs the service as a separate process (`node dist/src/main.js`), for tests that kill it
// or need a fresh process environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  output: () => string;
}

/**
 * Starts the service and resolves once its "listening" log line names the port. `prefix` runs
 * it under another command (e.g. `unshare -fp --mount-proc` to make it pid 1).
 */
export function spawnService(env: Record<string, string>, prefix: string[] = []): Promise<ServiceProcess> {
  const [command, ...args] = [...prefix, process.execPath, MAIN];
  const child = spawn(command!, args, {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', SERVICE_RATE_LIMIT: '0', SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output);
      if (match) resolve({ child, base: `http://127.0.0.1:${match[1]}`, output: () => output });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`service exited with ${code} before listening:\n${output}`)));
  });
}

/** Runs the service expecting it to fail at start-up; resolves with its exit code and output. */
export function spawnExpectingFailure(env: Record<string, string>): Promise<{ code: number | null; output: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (output += c));
  child.stderr!.on('data', (c: Buffer) => {
    output += c;
    stderr += c;
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    // 'close', not 'exit': the last lines written before exiting are read by then.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, stderr });
    });
  });
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}
