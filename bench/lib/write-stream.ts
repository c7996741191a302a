// A `remember` stream over HTTP to one or more service nodes at once (one wrk per node, distinct
// facts from a body file each, so no write is an update of an earlier one), with the writer's
// mean group-commit size over the phase read from each node's /metrics: the transaction size a
// raw-insert baseline must use to be the same work. The same stream sent to the bare uWS server
// is the generator's own ceiling: it must be far above the service's rate to have measured it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Corpus } from './corpus.js';
import { runWrk, type WrkResult } from './wrk.js';

export interface WriteStreamResult {
  /** Every node's wrk figures. */
  nodes: WrkResult[];
  /** Acknowledged writes per second, all nodes together. */
  rps: number;
  errors: number;
  /** Commands per writer transaction over the phase (embedding backfill flushes included). */
  meanBatch: number;
}

export const STREAM_CONNECTIONS = 64;

/** Writes `lines` remember bodies per file (one file per node) for entities of the seeded corpus. */
export function rememberBodies(dir: string, name: string, files: number, lines: number, seed: number, entities: number): string[] {
  return Array.from({ length: files }, (_, f) => {
    // The seeded corpus's seed, so the facts are about entities the database already holds (as
    // the raw baseline's are); each file starts further along its stream.
    const corpus = new Corpus(seed, entities);
    for (let i = 0; i < 5_000 * (f + 1); i++) corpus.next();
    const body = Array.from({ length: lines }, (_, i) => {
      const entity = corpus.entity();
      return JSON.stringify({ entity, fact: `${corpus.fact(entity)} (stream ${name} ${f}.${i})`, confidence: 0.9 });
    });
    const path = join(dir, `${name}-${f}.jsonl`);
    writeFileSync(path, `${body.join('\n')}\n`);
    return path;
  });
}

async function batchTotals(base: string): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^memory_runtime_writer_batch_commands_${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return { sum: value('sum'), count: value('count') };
}

/** wrk on every base at once, `STREAM_CONNECTIONS` each, for `seconds`. */
export async function rememberStream(script: string, title: string, bases: string[], bodies: string[], seconds: number, metrics = true): Promise<WriteStreamResult> {
  const before = metrics ? await Promise.all(bases.map(batchTotals)) : [];
  const nodes = await Promise.all(bases.map((base, i) => runWrk(script, {
    title: `${title} (${i + 1}/${bases.length})`, base, route: '/v1/remember', connections: STREAM_CONNECTIONS, seconds, threads: 1, bodiesFile: bodies[i],
  })));
  let meanBatch = NaN;
  if (metrics) {
    const after = await Promise.all(bases.map(batchTotals));
    const sum = after.reduce((s, a, i) => s + a.sum - before[i]!.sum, 0);
    const count = after.reduce((s, a, i) => s + a.count - before[i]!.count, 0);
    meanBatch = sum / count;
  }
  return { nodes, rps: nodes.reduce((s, n) => s + n.rps, 0), errors: nodes.reduce((s, n) => s + n.errors, 0), meanBatch };
}

/** Waits until the node has embedded every stored memory (its backfill writes the vectors). */
export async function backlogDrained(base: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const backlog = Number(/^memory_runtime_embedding_backlog (\d+)/m.exec(text)?.[1] ?? NaN);
    if (backlog === 0) return;
    if (Date.now() > deadline) throw new Error(`embedding backlog still ${backlog} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
