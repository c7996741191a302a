// Servers under test run as child processes (`node dist/src/main.js`, or the bare uWS
// hello-world), so the load generator in this process never shares their event loop.
// Their memory is read from /proc: RSS covers the main thread, the writer and the pool.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const UWS_HELLO = fileURLToPath(new URL('../uws-hello.js', import.meta.url));
/** Longest a server may take to say it listens (a cold start with model loading takes seconds). */
const START_TIMEOUT_MS = 120_000;

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly base: string;
  readonly pid: number;
  /** Resident memory in MiB: now, its peak so far, and now split into heap-like and file pages. */
  memory(): ProcessMemory;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  dbPath: string;
  embedder: 'hash' | 'use' | 'use-static' | 'glove';
  dimensions?: number;
  /** Extra environment (e.g. SERVICE_SYNCHRONOUS). */
  env?: Record<string, string>;
  /** Folder for `node --cpu-prof` output (BENCH_CPU_PROF). */
  cpuProfDir?: string;
  /** Entry script of another build (`<dist>/src/main.js`), to measure it against this one. */
  main?: string;
}

export function startService(options: ServiceOptions): Promise<ServerProcess> {
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    SERVICE_PATH: options.dbPath,
    // The bench is the only client and sends far more than any per-key quota allows.
    SERVICE_RATE_LIMIT: '0',
    SERVICE_EMBEDDER: options.embedder,
    ...(options.dimensions ? { SERVICE_EMBEDDING_DIMENSIONS: String(options.dimensions) } : {}),
    ...options.env,
    // Readiness is the info-level "listening" line: a quieter level would hide it and the
    // bench would wait for ever (bench:extraction once did, with LOG_LEVEL=warn).
    LOG_LEVEL: 'info',
  };
  const main = options.main ?? MAIN;
  const args = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`, main] : [main];
  return launch(args, env, /"port":(\d+)[^\n]*"msg":"listening"/);
}

/** The bare uWebSockets.js hello-world: the ceiling for any route on this machine. */
export function startUwsHello(): Promise<ServerProcess> {
  return launch([UWS_HELLO], {}, /listening on (\d+)/);
}

function launch(args: string[], env: Record<string, string>, ready: RegExp): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    // A server that never says it listens is a failure to report, not a silent wait.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server not listening after ${START_TIMEOUT_MS / 1000} s:\n${output}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      // Keep only the head of the log: enough to find the port or explain a failure.
      if (output.length < 64_000) output += chunk.toString();
      const match = ready.exec(output);
      if (!match) return;
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      child.off('exit', onEarlyExit);
      clearTimeout(timer);
      // Keep draining the pipes so a chatty server never blocks on a full pipe.
      child.stdout!.resume();
      child.stderr!.on('data', (c: Buffer) => process.stderr.write(c));
      resolve(handle(child, `http://127.0.0.1:${match[1]}`));
    };
    const onEarlyExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', onEarlyExit);
  });
}

function handle(child: ChildProcess, base: string): ServerProcess {
  const pid = child.pid!;
  return {
    child,
    base,
    pid,
    memory: () => memoryOf(pid),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

export interface ProcessMemory {
  rssMb: number;
  peakRssMb: number;
  /** Anonymous pages: JS heaps, SQLite caches, model weights. */
  rssAnonMb: number;
  /** File pages mapped into the process (the memory-mapped database): shared, reclaimable. */
  rssFileMb: number;
  /**
   * Proportional set size: each page divided by the number of its mappings. Every read
   * connection maps the database file separately, so RSS counts a shared file page once per
   * connection that touched it; PSS counts it once in total.
   */
  pssMb: number;
}

function memoryOf(pid: number): ProcessMemory {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN) / 1024;
    let pssMb = NaN;
    try {
      pssMb = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? NaN) / 1024;
    } catch {
      // smaps_rollup needs Linux 4.14+; PSS is then unknown.
    }
    return { rssMb: kb('VmRSS'), peakRssMb: kb('VmHWM'), rssAnonMb: kb('RssAnon'), rssFileMb: kb('RssFile'), pssMb };
  } catch {
    return { rssMb: NaN, peakRssMb: NaN, rssAnonMb: NaN, rssFileMb: NaN, pssMb: NaN };
  }
}

/**
 * Pins every thread of a process to one CPU (util-linux taskset), so a load generator pinned
 * to another never competes with it for a core. False where it cannot be done (one CPU, no
 * taskset): figures are then measured unpinned.
 */
export function pinToCpu(pid: number, cpu: number): boolean {
  if (availableParallelism() <= cpu) return false;
  try {
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
