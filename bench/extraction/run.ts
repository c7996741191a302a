// bench:extraction — what `end` stores from a conversation, measured against LoCoMo's
// human-checked per-session observations, through the real service (child process, HTTP).
//
//   npm run bench:extraction -- [--baseline-dist <dist of another build>] [--sessions N] [--latency-episodes N]
//
// Each LoCoMo session becomes an episode: participants are the two speakers, each turn is a
// message whose role is its speaker's name, then `end`. The memories that episode stored
// (semantic and procedural, read from the database file by episode) are scored against the
// session's observations (scoring.ts). Tiers:
// - rules: SERVICE_EXTRACTOR_URL points at a closed port, so `end` falls back to tier 1 — this
//   build, and the baseline build side by side when --baseline-dist is given;
// - LLM: a local stand-in (test/support/fake-llm.ts) that answers each `end` with that
//   session's observations, so a perfect score checks the plumbing (tier 2 stored, reported),
//   not a model.
// Then `end` latency at concurrency 1 on 30-turn episodes, the two builds alternated episode by
// episode so the machine's load drifts hit both alike; the first `end` of each service (the
// tier-1 model loading in a pool thread) is reported on its own.
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startService, type ServerProcess } from '../lib/processes.js';
import { progress } from '../lib/progress.js';
import { percentile } from '../recall-quality/scoring.js';
import { FakeLlm, unreachableUrl } from '../../test/support/fake-llm.js';
import { loadReference, type ReferenceSession } from './reference.js';
import { emptyTally, ratio, score, type Tally } from './scoring.js';

const EPISODE_TURNS = 30;
const WINDOW_STRIDE = 5;

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  if (at < 0) return undefined;
  const value = process.argv[at + 1];
  if (!value) throw new Error(`${name} needs a value`);
  return value;
}

interface Side {
  name: string;
  server: ServerProcess;
  dbPath: string;
  dir: string;
  tally: Tally;
  tiers: Map<string, number>;
  latencies: number[];
  firstEnd: number | null;
}

async function post(base: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

async function openSide(name: string, main: string | undefined, extractorUrl: string): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-extraction-'));
  const dbPath = join(dir, 'memory.db');
  const server = await startService({ dbPath, embedder: 'hash', main, env: { SERVICE_EXTRACTOR_URL: extractorUrl } });
  return { name, server, dbPath, dir, tally: emptyTally(), tiers: new Map(), latencies: [], firstEnd: null };
}

async function closeSide(side: Side): Promise<void> {
  await side.server.stop();
  rmSync(side.dir, { recursive: true, force: true });
}

/** Runs one episode to its end; returns the stored memories' contents and the end call's time. */
async function runEpisode(side: Side, speakers: string[], turns: { speaker: string; text: string }[]): Promise<{ memories: string[]; ms: number }> {
  const { episode_id: id } = await post(side.server.base, '/v1/episodes/start', { participants: speakers });
  for (const turn of turns) await post(side.server.base, `/v1/episodes/${id}/message`, { role: turn.speaker, content: turn.text });
  const started = performance.now();
  const end = await post(side.server.base, `/v1/episodes/${id}/end`, {});
  const ms = performance.now() - started;
  const tier = end.extraction_tier === undefined ? 'absent' : String(end.extraction_tier);
  side.tiers.set(tier, (side.tiers.get(tier) ?? 0) + 1);
  const db = new Database(side.dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    const rows = db.prepare(`SELECT content FROM memories WHERE episode_id = ? AND memory_type != 'episodic'`).all(id) as { content: string }[];
    return { memories: rows.map((r) => r.content), ms };
  } finally {
    db.close();
  }
}

function qualityLine(side: Side): string {
  const t = side.tally;
  const tiers = [...side.tiers].map(([tier, n]) => `${tier}×${n}`).join(' ');
  return `${side.name.padEnd(34)} ${String(t.memories).padStart(8)} ${ratio(t.covered, t.observations).toFixed(3).padStart(9)} ` +
    `${ratio(t.matching, t.memories).toFixed(3).padStart(9)} ${ratio(t.malformed, t.memories).toFixed(3).padStart(9)}   ${tiers}`;
}

async function quality(sessions: ReferenceSession[], sides: Side[], llm: FakeLlm, llmSide: Side): Promise<void> {
  const step = progress('extraction sessions (each through every service)', sessions.length);
  for (const [i, session] of sessions.entries()) {
    step(i);
    for (const side of sides) {
      const { memories } = await runEpisode(side, session.speakers, session.turns);
      score(side.tally, memories, session.observations);
    }
    llm.reply = { kind: 'memories', memories: session.observations.map((content) => ({ content, memory_type: 'semantic', confidence: 0.9 })) };
    const { memories } = await runEpisode(llmSide, session.speakers, session.turns);
    score(llmSide.tally, memories, session.observations);
  }
  step(sessions.length);
  step.done();
  const observations = sides[0].tally.observations;
  console.log(`\nExtraction against LoCoMo observations: ${sessions.length} sessions, ${sessions.reduce((n, s) => n + s.turns.length, 0)} turns, ${observations} observations`);
  console.log(`coverage = observations matched by a memory at token F1 >= 0.5; precision = memories matching an observation at F1 >= 0.4;`);
  console.log(`malformed = memories keeping a first- or second-person pronoun. tiers = extraction_tier in the end answers.`);
  console.log(`${'build / tier'.padEnd(34)} ${'memories'.padStart(8)} ${'coverage'.padStart(9)} ${'precision'.padStart(9)} ${'malformed'.padStart(9)}   tiers`);
  for (const side of [...sides, llmSide]) console.log(qualityLine(side));
}

/** `end` latency on 30-turn episodes cut from the conversations, the builds alternated. */
async function latency(sessions: ReferenceSession[], sides: Side[], episodes: number): Promise<void> {
  const windows: ReferenceSession[] = [];
  for (const s of sessions) {
    // Overlapping windows (a new one every WINDOW_STRIDE turns): few sessions reach 30 turns, and
    // a p95 needs more than a dozen episodes.
    for (let at = 0; at + EPISODE_TURNS <= s.turns.length; at += WINDOW_STRIDE) windows.push({ ...s, turns: s.turns.slice(at, at + EPISODE_TURNS) });
  }
  const chosen = windows.slice(0, episodes + 1);
  const step = progress('end latency episodes', chosen.length);
  for (const [i, window] of chosen.entries()) {
    step(i);
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const { ms } = await runEpisode(side, window.speakers, window.turns);
      if (i === 0) side.firstEnd = ms;
      else side.latencies.push(ms);
    }
  }
  step(chosen.length);
  step.done();
  console.log(`\nend latency, concurrency 1, ${EPISODE_TURNS}-turn episodes (${chosen.length - 1} per build after a first one), client-side ms`);
  console.log(`${'build'.padEnd(34)} ${'first'.padStart(8)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'max'.padStart(8)}`);
  for (const side of sides) {
    const f = (v: number) => v.toFixed(1).padStart(8);
    console.log(`${side.name.padEnd(34)} ${f(side.firstEnd ?? NaN)} ${f(percentile(side.latencies, 50))} ${f(percentile(side.latencies, 95))} ${f(Math.max(...side.latencies))}`);
  }
  if (sides.length === 2) {
    console.log(`p95 ratio this/baseline: ${(percentile(sides[0].latencies, 95) / percentile(sides[1].latencies, 95)).toFixed(2)}`);
  }
}

const reference = loadReference();
if (!reference) {
  console.log('bench:extraction skipped: no LoCoMo data set (set BENCH_LOCOMO_DIR to the folder holding locomo-dev.json).');
} else {
  const baselineDist = option('--baseline-dist');
  const baselineMain = baselineDist ? join(resolve(baselineDist), 'src', 'main.js') : undefined;
  if (baselineMain && !existsSync(baselineMain)) throw new Error(`--baseline-dist: no ${baselineMain} (build that commit first)`);
  const sessions = reference.slice(0, Number(option('--sessions') ?? reference.length));
  const latencyEpisodes = Number(option('--latency-episodes') ?? 40);
  const closed = await unreachableUrl();
  const llm = await FakeLlm.start();
  const sides = [await openSide('this build, rules (tier 1)', undefined, closed)];
  if (baselineMain) sides.push(await openSide(`baseline, rules`, baselineMain, closed));
  const llmSide = await openSide('this build, LLM stand-in (tier 2)', undefined, llm.url);
  try {
    await quality(sessions, sides, llm, llmSide);
    await closeSide(llmSide);
    // Fresh services for latency: the first `end` of each is the cold one.
    const latencySides = [await openSide('this build, rules', undefined, closed)];
    if (baselineMain) latencySides.push(await openSide('baseline, rules', baselineMain, closed));
    try {
      await latency(reference, latencySides, latencyEpisodes);
    } finally {
      await Promise.all(latencySides.map(closeSide));
    }
  } finally {
    await Promise.all(sides.map(closeSide));
    await llm.close();
  }
}
