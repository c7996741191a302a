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
local next_tid = 0
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
function delay()
  return pause
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f}\\n', summary.requests, summary.duration, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
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
  /** Pause of each connection between its requests (paces the rate); default none. */
  delayMs?: number;
}

export interface WrkResult {
  title: string;
  connections: number;
  requests: number;
  rps: number;
  /** Latencies in ms. */
  p50: number;
  p90: number;
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

export function runWrk(script: string, spec: WrkSpec): Promise<WrkResult> {
  const threads = spec.threads ?? Math.min(2, spec.connections);
  const args = ['-t', String(threads), '-c', String(spec.connections), '-d', `${spec.seconds}s`, '--timeout', '30s', '-s', script, spec.base + spec.route];
  const env = { ...process.env, WRK_BODIES: spec.bodiesFile ?? '', WRK_THREADS: String(threads), WRK_ROUTE: spec.route, WRK_DELAY_MS: String(spec.delayMs ?? 0) };
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { env, maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) return reject(error);
      const line = /WRKJSON (\{.*\})/.exec(stdout);
      if (!line) return reject(new Error(`wrk printed no figures:\n${stdout}`));
      const r = JSON.parse(line[1]);
      const result: WrkResult = {
        title: spec.title,
        connections: spec.connections,
        requests: r.requests,
        rps: r.requests / (r.duration_us / 1e6),
        p50: r.p50 / 1000,
        p90: r.p90 / 1000,
        p99: r.p99 / 1000,
        max: r.max / 1000,
        errors: r.connect + r.read + r.write + r.status + r.timeout,
      };
      note(`${spec.title} c=${spec.connections}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, errors ${result.errors}`);
      resolve(result);
    });
  });
}
