// Starts a real service (uWS on an ephemeral port, writer thread, Piscina pool, SQLite file
// in a fresh temp folder, or a fresh PostgreSQL database when the run says so: support/test-backend.ts)
// for a test file, and small HTTP helpers around it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config.js';
import { createLogger } from '../../src/shared/logger.js';
import { startService, type RunningService, type ServiceHooks } from '../../src/service.js';
import { backendEnv } from './test-backend.js';

export interface TestService {
  base: string;
  dir: string;
  service: RunningService;
  close(): Promise<void>;
}

/** Every folder tempDir made in this process; removed when the process exits. */
const made = new Set<string>();
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh temp folder, removed when the test process exits (`node --test` runs each file in a
 * process of its own) rather than by the test: every folder goes, whether its test passed or
 * threw, and never while a service, child process or `after` hook of the file still uses it.
 */
export function tempDir(prefix = 'memrt-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

export async function startTestService(env: Record<string, string> = {}, hooks: ServiceHooks = {}): Promise<TestService> {
  const dir = tempDir();
  // A test that names its own storage keeps it; the others run on the backend of this run.
  const backend = env.SERVICE_DATABASE_URL || env.SERVICE_PATH ? {} : await backendEnv();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    SERVICE_PATH: join(dir, 'memory.db'),
    SERVICE_RATE_LIMIT: '0',
    SERVICE_POOL_THREADS: '2',
    // Nothing listens on the discard port: extraction falls back to the rules at once, and no
    // test depends on whatever might run on the default extractor port of this machine.
    SERVICE_EXTRACTOR_URL: 'http://127.0.0.1:9/v1',
    // Consolidation runs only when a test asks for it, so its counts stay exact.
    SERVICE_CONSOLIDATE_INTERVAL_SECONDS: '0',
    ...backend,
    ...env,
  });
  const service = await startService(config, createLogger('silent'), hooks);
  return {
    base: `http://127.0.0.1:${service.port}`,
    dir,
    service,
    async close() {
      await service.close();
      // At once rather than at exit: a file may start dozens of services.
      rmSync(dir, { recursive: true, force: true });
      made.delete(dir);
    },
  };
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  /** Ends the wait (a test that must fail rather than hang). */
  signal?: AbortSignal,
): Promise<Reply<T>> {
  const init: RequestInit = { method, headers: { ...headers }, ...(signal ? { signal } : {}) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(base + path, init);
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // leave as text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

export const post = <T = any>(base: string, path: string, body?: unknown, headers?: Record<string, string>, signal?: AbortSignal) =>
  call<T>(base, 'POST', path, body, headers, signal);
export const get = <T = any>(base: string, path: string, headers?: Record<string, string>) =>
  call<T>(base, 'GET', path, undefined, headers);
export const del = <T = any>(base: string, path: string, headers?: Record<string, string>) =>
  call<T>(base, 'DELETE', path, undefined, headers);

/**
 * Stores `count` facts about `entity` in order ("<prefix> number <i> is kept in drawer <i>") and
 * returns them: through remember/batch, 1,000 a call, for tests about what happens to many rows
 * (deletes, restores), not about single remembers.
 */
export async function rememberMany(base: string, entity: string, count: number, prefix: string): Promise<{ id: string; content: string }[]> {
  const stored: { id: string; content: string }[] = [];
  for (let i = 0; i < count; i += 1000) {
    const facts = Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({ entity, fact: `${prefix} number ${i + k} is kept in drawer ${i + k}` }));
    const r = await post(base, '/v1/remember/batch', { facts });
    if (r.status !== 200 || r.body.stored !== facts.length) {
      throw new Error(`remember/batch: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
    }
    stored.push(...r.body.results.map((result: { memory: { id: string; content: string } }) => result.memory));
  }
  return stored;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The memory ids of a recall_grouped answer, group by group. */
export const groupedIds = (answer: { groups: { memories: { id: string }[] }[] }): string[] =>
  answer.groups.flatMap((group) => group.memories.map((memory) => memory.id));
