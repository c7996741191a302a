// Recall quality on the synthetic corpus (corpus.ts), kept as a regression guard: recall@1/5/10
// and MRR for each single signal, for the fused ranking, and for a plain FTS5 bm25 baseline
// computed in the same run. The corpus is written through the real service (writer thread,
// embedding backfill), then the recall engine is evaluated directly on the database file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config.js';
import { createLogger } from '../../src/shared/logger.js';
import { openDatabase } from '../../src/shared/db.js';
import { startService } from '../../src/service.js';
import { SqliteReadPort } from '../../src/workers/sqlite/read-port.js';
import { RecallEngine, type SignalName } from '../../src/workers/recall/engine.js';
import { queryTerms } from '../../src/workers/recall/query-text.js';
import { ftsMatchExpression } from '../../src/workers/sqlite/fts-match.js';
import { createEmbedder, embedderIdentity } from '../../src/workers/embedding/index.js';
import { buildCorpus } from './corpus.js';

const KS = [1, 5, 10] as const;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
/** `--weights bm25=0.6,vector=0.4,adjacent=0.3,entity=0.1,strength=0.02` overrides fusion weights (for tuning). */
const weightsArg = process.argv[process.argv.indexOf('--weights') + 1];
const weights = process.argv.includes('--weights')
  ? Object.fromEntries(weightsArg.split(',').map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])]))
  : undefined;

interface Row {
  name: string;
  recall: Record<number, number>;
  mrr: number;
}

function score(name: string, ranked: Map<string, string[]>, targets: Map<string, Set<string>>): Row {
  const recall: Record<number, number> = {};
  for (const k of KS) {
    let hits = 0;
    for (const [q, ids] of ranked) if (ids.slice(0, k).some((id) => targets.get(q)!.has(id))) hits++;
    recall[k] = hits / ranked.size;
  }
  let mrr = 0;
  for (const [q, ids] of ranked) {
    const rank = ids.findIndex((id) => targets.get(q)!.has(id));
    if (rank >= 0) mrr += 1 / (rank + 1);
  }
  return { name, recall, mrr: mrr / ranked.size };
}

/** The embedders the quality benches can run the service with (SERVICE_EMBEDDER). */
export type BenchEmbedder = 'use' | 'use-static' | 'glove' | 'hash';

export async function runSynthetic(embedderKind: BenchEmbedder): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'recall-quality-'));
  const env = { HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: embedderKind };
  const config = loadConfig(env);
  // Weights were tuned on the default seed (42); `--seed N` evaluates on a corpus not tuned on.
  const seed = process.argv.includes('--seed') ? Number(process.argv[process.argv.indexOf('--seed') + 1]) : 42;
  const corpus = buildCorpus({ people: 24, sessionsPerPerson: 3, factsPerPerson: 6, seed });
  process.stderr.write(`corpus: ${corpus.sessions.length} sessions, ${corpus.sessions.reduce((n, s) => n + s.turns.length, 0)} turns, ${corpus.questions.length} questions\n`);

  // 1. Write the corpus through the service's real write path.
  const service = await startService(config, createLogger('silent'));
  // Several people say the same sentence: a fact turn is found by its episode and position, never by its text.
  const episodes: string[] = [];
  for (const [i, session] of corpus.sessions.entries()) {
    const { episode_id } = (await service.operations.startEpisode({ participants: [session.person, 'assistant'] }, { namespace: config.namespace, operator: true })).value;
    episodes.push(episode_id);
    for (const turn of session.turns) await service.operations.addMessage({ episode_id, role: turn.role, content: turn.content }, { namespace: config.namespace, operator: true });
    if (i % 10 === 0) process.stderr.write(`\rwriting sessions ${i + 1}/${corpus.sessions.length}`);
  }
  process.stderr.write('\rembedding…                      \n');
  const started = performance.now();
  await service.backfill.idle();
  process.stderr.write(`embedded in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  await service.close();

  // 2. Evaluate on the file, read-only, exactly as the pool does.
  const db = openDatabase(config.dbPath, { readonly: true });
  const namespaceId = (db.prepare('SELECT id FROM namespaces WHERE name = ?').get(config.namespace) as { id: number }).id;
  const turnIds = new Map<string, string>(); // question id → the memory id of the turn answering it
  const turnAt = db.prepare<[string, number], { id: string }>('SELECT id FROM memories WHERE episode_id = ? AND seq = ?');
  for (const [i, session] of corpus.sessions.entries()) {
    for (const [seq, turn] of session.turns.entries()) {
      for (const q of turn.answers ?? []) turnIds.set(q, turnAt.get(episodes[i], seq)!.id);
    }
  }
  const targets = new Map(corpus.questions.map((q) => [q.id, new Set([turnIds.get(q.id)!])]));
  const embedder = await createEmbedder(config);
  const vectors = await embedder.embed(corpus.questions.map((q) => q.text));
  const minSimilarity = embedderIdentity(config).minSimilarity;

  const variants: [string, SignalName[] | undefined][] = [
    ['bm25 only', ['bm25']], ['vector only', ['vector']],
    ['bm25 + vector', ['bm25', 'vector']], ['fused (all signals)', undefined],
  ];
  const rows: Row[] = [];
  // Plain BM25 baseline: the FTS5 query alone on the content column, no filters, no fusion.
  const fts = db.prepare('SELECT m.id FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 10');
  const baseline = new Map(corpus.questions.map((q) => {
    const match = ftsMatchExpression(queryTerms(q.text));
    return [q.id, match ? (fts.all(`{content} : (${match})`) as { id: string }[]).map((r) => r.id) : []];
  }));
  rows.push(score('baseline: plain FTS5 bm25', baseline, targets));
  const now = Date.now();
  let fusedRanked = new Map<string, string[]>();
  for (const [name, only] of variants) {
    const engine = new RecallEngine(new SqliteReadPort(db, namespaceId, config.namespace, { minSimilarity }), { only, weights });
    const ranked = new Map<string, string[]>();
    for (const [i, q] of corpus.questions.entries()) {
      ranked.set(q.id, (await engine.recall({ query: q.text, entity: null, types: null, limit: 10, queryVector: vectors[i] }, now)).map((h) => h.row.id));
    }
    rows.push(score(name, ranked, targets));
    if (!only) fusedRanked = ranked;
  }
  db.close();
  rmSync(dir, { recursive: true, force: true });

  console.log(`\nRecall quality — ${corpus.questions.length} questions over ${corpus.sessions.length} sessions, embedder ${embedder.id}, seed ${seed}`);
  console.log(`${'ranking'.padEnd(28)}${KS.map((k) => `R@${k}`.padStart(7)).join('')}    MRR`);
  for (const row of rows) console.log(`${row.name.padEnd(28)}${KS.map((k) => pct(row.recall[k])).join('')}  ${row.mrr.toFixed(3)}`);
  // The same table for each question style, fused vs baseline.
  for (const style of ['paraphrase', 'lexical']) {
    const subset = (ranked: Map<string, string[]>) => new Map([...ranked].filter(([q]) => q.endsWith(style)));
    console.log(`  ${style} questions: fused R@10 ${pct(score('', subset(fusedRanked), targets).recall[10]).trim()}, plain BM25 R@10 ${pct(score('', subset(baseline), targets).recall[10]).trim()}`);
  }
  const fused = rows.at(-1)!;
  console.log(`\nfused R@10 ${pct(fused.recall[10]).trim()} vs plain BM25 ${pct(rows[0].recall[10]).trim()} (×${(fused.recall[10] / Math.max(rows[0].recall[10], 1e-9)).toFixed(2)})`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/recall-quality-${embedder.id}.json`, JSON.stringify({ embedder: embedder.id, questions: corpus.questions.length, rows }, null, 2));
}

