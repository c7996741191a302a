// Drives a load phase with wrk (Debian's `wrk`, C, multi-threaded): unlike a JS generator it
// is never the bottleneck on this machine. A Lua script sends POST bodies from a file (one
// JSON body a line, each thread its own share, so query strings never repeat within a phase)
// and prints its figures as one JSON line that is parsed here. wrk's latencies are µs.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { note } from './progress.js';

const SCRIPT = `
local bodies_path = os.getenv("WRK_BODIES")
local threads = tonumber(os.getenv("WRK_THREADS") or "1")
local route = os.getenv("WRK_ROUTE") or "/"
local pause = tonumber(os.getenv("WRK_DELAY_MS") or "0")
local rate = tonumber(os.getenv("WRK_RATE") or "0")
local next_tid = 0
-- A wall clock for pacing (wrk's Lua has none): LuaJIT's FFI calls clock_gettime(CLOCK_MONOTONIC).
local now_ms = nil
if rate > 0 then
  local ffi = require("ffi")
  ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } wrk_timespec; int clock_gettime(int clock, wrk_timespec *tp); ]]
  local ts = ffi.new("wrk_timespec")
  now_ms = function()
    ffi.C.clock_gettime(1, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
end
function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end
function init(args)
  bodies = {}
  at = 0
  if bodies_path and bodies_path ~= "" then
    local i = 0
    for line in io.lines(bodies_path) do
      if i % threads == tid then bodies[#bodies + 1] = line end
      i = i + 1
    end
  end
end
function request()
  if #bodies == 0 then return wrk.format("GET", route) end
  at = at + 1
  if at > #bodies then at = 1 end
  return wrk.format("POST", route, { ["Content-Type"] = "application/json" }, bodies[at])
end
-- With WRK_RATE, each thread hands out send slots every threads/rate s, open-loop: a request
-- waits for the next free slot whatever its connection's last answer took, so the rate holds
-- while latency varies (as long as enough connections are free). A thread that falls behind
-- catches up at most 100 ms of slots, not in one burst.
local due = nil
function delay()
  if rate <= 0 then return pause end
  local t = now_ms()
  if due == nil or due < t - 100 then due = t end
  local wait = due - t
  due = due + (1000 * threads) / rate
  if wait > 0 then return wait end
  return 0
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p95":%d,"p99":%d,"max":%d,"mean":%f}\\n', summary.requests, summary.duration, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(95), latency:percentile(99), latency.max, latency.mean))
end
`;

export interface WrkSpec {
  title: string;
  base: string;
  route: string;
  connections: number;
  seconds: number;
  threads?: number;
  /** File of JSON bodies, one a line; absent = GET. */
  bodiesFile?: string;
  /** Pause of each connection between its requests; default none. */
  delayMs?: number;
  /** Requests per second to pace at (all threads together), whatever the latency; needs enough connections. */
  rate?: number;
  /** Run wrk on this CPU only (taskset), so it never takes the server's core. */
  cpu?: number;
}

export interface WrkResult {
  title: string;
  connections: number;
  requests: number;
  rps: number;
  /** Latencies in ms. */
  p50: number;
  p90: number;
  /** Runs with a bodies script only (plain wrk prints no 95th). */
  p95?: number;
  p99: number;
  max: number;
  /** Socket errors + timeouts + non-2xx/3xx answers: a figure with any is not valid. */
  errors: number;
}

export function wrkAvailable(): Promise<boolean> {
  return new Promise((resolve) => execFile('wrk', ['-v'], (error) => resolve(!error || (error as { code?: unknown }).code !== 'ENOENT')));
}

export function writeScript(dir: string): string {
  const path = join(dir, 'bodies.lua');
  writeFileSync(path, SCRIPT);
  return path;
}

/**
 * `script` null runs plain wrk (GET, no Lua): a script defining request() and delay() makes
 * wrk call Lua and arm a timer for every request, which halves what one wrk thread can send —
 * too slow to saturate a bare uWS server.
 */
export function runWrk(script: string | null, spec: WrkSpec): Promise<WrkResult> {
  const threads = spec.threads ?? Math.min(2, spec.connections);
  const args = ['-t', String(threads), '-c', String(spec.connections), '-d', `${spec.seconds}s`, '--timeout', '30s', '--latency',
    ...(script ? ['-s', script] : []), spec.base + spec.route];
  const env = { ...process.env, WRK_BODIES: spec.bodiesFile ?? '', WRK_THREADS: String(threads), WRK_ROUTE: spec.route, WRK_DELAY_MS: String(spec.delayMs ?? 0), WRK_RATE: String(spec.rate ?? 0) };
  const [command, argv] = spec.cpu === undefined ? ['wrk', args] : ['taskset', ['-c', String(spec.cpu), 'wrk', ...args]];
  return new Promise((resolve, reject) => {
    execFile(command, argv, { env, maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) return reject(error);
      let result: WrkResult;
      try {
        result = script ? fromScript(spec, stdout) : fromText(spec, stdout);
      } catch (failure) {
        return reject(failure);
      }
      note(`${spec.title} c=${spec.connections}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, errors ${result.errors}`);
      resolve(result);
    });
  });
}

/** The JSON line our Lua script's done() prints (latencies in µs). */
function fromScript(spec: WrkSpec, stdout: string): WrkResult {
  const line = /WRKJSON (\{.*\})/.exec(stdout);
  if (!line) throw new Error(`wrk printed no figures:\n${stdout}`);
  const r = JSON.parse(line[1]);
  return {
    title: spec.title,
    connections: spec.connections,
    requests: r.requests,
    rps: r.requests / (r.duration_us / 1e6),
    p50: r.p50 / 1000,
    p90: r.p90 / 1000,
    p95: r.p95 / 1000,
    p99: r.p99 / 1000,
    max: r.max / 1000,
    errors: r.connect + r.read + r.write + r.status + r.timeout,
  };
}

/** wrk's own report with --latency ("50%  250.00us", "Socket errors: connect 0, …"). */
function fromText(spec: WrkSpec, stdout: string): WrkResult {
  const ms = (value: string, unit: string) => Number(value) * ({ us: 1e-3, ms: 1, s: 1e3, m: 6e4 } as Record<string, number>)[unit];
  const percentile = (p: number) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(stdout);
    if (!m) throw new Error(`wrk printed no ${p}th percentile:\n${stdout}`);
    return ms(m[1], m[2]);
  };
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m),/.exec(stdout);
  const max = /^\s+Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/m.exec(stdout);
  if (!total || !max) throw new Error(`wrk printed no figures:\n${stdout}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  const errors = (socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0) + (non2xx ? Number(non2xx[1]) : 0);
  const requests = Number(total[1]);
  return {
    title: spec.title, connections: spec.connections, requests, rps: requests / (ms(total[2], total[3]) / 1000),
    p50: percentile(50), p90: percentile(90), p99: percentile(99), max: ms(max[1], max[2]), errors,
  };
}
