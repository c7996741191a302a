// Tuning loop for recall ranking on the LoCoMo dev split, without HTTP: each conversation is
// written once through the service's real write path (as locomo.ts does over HTTP: one episode
// per session, each turn "Speaker: text"), embedded, and kept in a cache folder; then the recall
// engine runs directly on the files, once per weight setting, all settings in one process.
// The published figures come from bench:quality (locomo.ts, through HTTP); this is for sweeps.
//
//   node dist/bench/recall-quality/locomo-tune.js [--cache <dir>] 'session=0' 'session=0.2' ...
//   (SERVICE_EMBEDDER: the stored turns' embedder; TUNE_QUERY_EMBEDDER: the questions', when another)
//
// Each argument is a weight setting (comma-separated name=value, see SIGNAL_WEIGHTS); '' is the
// defaults. Prints R@1/5/10, MRR and R@10 per category per setting, and the engine's ranking
// latency (query embedding and HTTP excluded: they do not depend on the weights), the settings
// asked alternately, two passes. Only aggregates.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config.js';
import { createLogger } from '../../src/shared/logger.js';
import { openDatabase } from '../../src/shared/db.js';
import { startService } from '../../src/service.js';
import { SqliteReadPort } from '../../src/workers/sqlite/read-port.js';
import { RecallEngine, type EngineOptions, type SignalName } from '../../src/workers/recall/engine.js';
import { createEmbedder, embedderIdentity } from '../../src/workers/embedding/index.js';
import { loadLocomo, type Conversation } from './locomo-data.js';
import { percentile, scoreRankings } from './scoring.js';
import { plainBm25 } from './locomo.js';

// As the service: SERVICE_VECTOR_MIN_SIMILARITY, when set, overrides the embedder's floor.
const floorOverride = process.env.SERVICE_VECTOR_MIN_SIMILARITY ? { SERVICE_VECTOR_MIN_SIMILARITY: process.env.SERVICE_VECTOR_MIN_SIMILARITY } : {};

const flag = process.argv.indexOf('--cache');
const embedderKind = process.env.SERVICE_EMBEDDER ?? 'use';
// Each embedder (and each of its settings) writes its own vectors: one cache folder per embedder identity.
const embedderId = embedderIdentity(loadConfig({ SERVICE_PATH: ':memory:', SERVICE_EMBEDDER: embedderKind })).id.replace(/[^\w.-]/g, '_');
const cache = flag >= 0 ? process.argv[flag + 1] : join('/tmp', `locomo-tune-${process.env.USER ?? 'bench'}-${embedderId}`);
const settings = process.argv.slice(2).filter((a, i, all) => a !== '--cache' && all[i - 1] !== '--cache');
if (settings.length === 0) settings.push('');

const conversations = loadLocomo();
if (!conversations) throw new Error('no LoCoMo data (BENCH_LOCOMO_DIR)');
mkdirSync(cache, { recursive: true });

/** Writes one conversation into its own store (once) and returns memory id → dia id. */
async function stored(conversation: Conversation): Promise<{ dbPath: string; diaOf: Map<string, string> }> {
  const dbPath = join(cache, `${conversation.id}.db`);
  const mapPath = join(cache, `${conversation.id}.json`);
  if (existsSync(mapPath)) return { dbPath, diaOf: new Map(JSON.parse(readFileSync(mapPath, 'utf8')) as [string, string][]) };
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: dbPath, SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: embedderKind });
  const service = await startService(config, createLogger('silent'));
  const episodes: string[] = [];
  for (const session of conversation.sessions) {
    const { episode_id } = (await service.operations.startEpisode({ participants: conversation.speakers }, { namespace: config.namespace, operator: true })).value;
    episodes.push(episode_id);
    for (const turn of session) await service.operations.addMessage({ episode_id, role: 'user', content: `${turn.speaker}: ${turn.text}` }, { namespace: config.namespace, operator: true });
  }
  await service.backfill.idle();
  await service.close();
  const db = openDatabase(dbPath, { readonly: true });
  const sessionOf = new Map(episodes.map((id, i) => [id, i]));
  const diaOf = new Map<string, string>();
  for (const row of db.prepare("SELECT id, episode_id, seq FROM memories WHERE memory_type = 'episodic'").all() as { id: string; episode_id: string; seq: number }[]) {
    const turn = conversation.sessions[sessionOf.get(row.episode_id)!]?.[row.seq];
    if (turn) diaOf.set(row.id, turn.diaId);
  }
  db.close();
  writeFileSync(mapPath, JSON.stringify([...diaOf]));
  return { dbPath, diaOf };
}

/** 'adjacent=0.4,reach=2': weights, `reach` (not a weight: how far a neighbouring turn lifts) and `depth` (each probe's least depth). */
const parse = (setting: string): EngineOptions => {
  const { reach, depth, ...weights } = Object.fromEntries(setting.split(',').filter(Boolean)
    .map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])])) as Partial<Record<SignalName | 'reach' | 'depth', number>>;
  return { weights, reach, minDepth: depth };
};

const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(cache, 'unused.db'), SERVICE_EMBEDDER: embedderKind, ...floorOverride });
// TUNE_QUERY_EMBEDDER: queries embedded by another embedder than the stored turns (asymmetric,
// e.g. stored USE-lite, static queries); the floor then is the stored embedder's unless overridden.
const embedder = await createEmbedder(process.env.TUNE_QUERY_EMBEDDER ? loadConfig({ SERVICE_PATH: ':memory:', SERVICE_EMBEDDER: process.env.TUNE_QUERY_EMBEDDER }) : config);
// As the service: SERVICE_VECTOR_MIN_SIMILARITY overrides the embedder's floor.
const minSimilarity = config.vectorMinSimilarity ?? embedderIdentity(config).minSimilarity;
const ranked = settings.map(() => new Map<string, string[]>());
const evidence = new Map<string, Set<string>>();
const category = new Map<string, number>();
const latencies = settings.map((): number[] => []);
const bm25 = new Map<string, string[]>();
// TUNE_PASSES=1 for a quality-only sweep (the latency columns then come from one pass).
const PASSES = Number(process.env.TUNE_PASSES ?? 2);
for (const conversation of conversations) {
  const { dbPath, diaOf } = await stored(conversation);
  const db = openDatabase(dbPath, { readonly: true });
  const namespaceId = (db.prepare('SELECT id FROM namespaces WHERE name = ?').get(config.namespace) as { id: number }).id;
  const vectors = await embedder.embed(conversation.questions.map((q) => q.text));
  for (const q of conversation.questions) {
    evidence.set(`${conversation.id}#${q.index}`, new Set(q.evidence));
    category.set(`${conversation.id}#${q.index}`, q.category);
  }
  for (const [q, ids] of plainBm25(conversation)) bm25.set(q, ids);
  const now = Date.now();
  const engines = settings.map((setting) => new RecallEngine(new SqliteReadPort(db, namespaceId, config.namespace, { minSimilarity }), parse(setting)));
  // Settings take turns question by question (the first to go rotates), so load drifts on a
  // shared machine hit every setting alike: the latency columns compare ranking cost.
  for (let pass = 0; pass < PASSES; pass++) {
    for (const [i, q] of conversation.questions.entries()) {
      for (let k = 0; k < settings.length; k++) {
        const s = (i + k) % settings.length;
        const started = performance.now();
        const hits = await engines[s].recall({ query: q.text, entity: null, types: ['episodic'], limit: 10, queryVector: vectors[i] }, now);
        latencies[s].push(performance.now() - started);
        if (pass === 0) ranked[s].set(`${conversation.id}#${q.index}`, hits.map((h) => diaOf.get(h.row.id) ?? h.row.id));
      }
    }
  }
  db.close();
}
const only = (c: number) => new Map([...evidence].filter(([q]) => category.get(q) === c));
const p = (x: number) => (x * 100).toFixed(1).padStart(5);
console.log(`${'setting'.padEnd(44)}  R@1   R@5  R@10   MRR | multi temp open single (R@10) | ranking p50 p95 ms`);
const rows: [string, Map<string, string[]>][] = [['plain BM25 (FTS5, no stemming)', bm25], ...settings.map((setting, s): [string, Map<string, string[]>] => [setting || '(defaults)', ranked[s]])];
for (const [s, [setting, rankings]] of rows.entries()) {
  const all = scoreRankings(rankings, evidence);
  const cat = [1, 2, 3, 4].map((c) => p(scoreRankings(rankings, only(c)).recall[10]));
  const cost = s === 0 ? '' : `${percentile(latencies[s - 1], 50).toFixed(2)} ${percentile(latencies[s - 1], 95).toFixed(2)}`;
  console.log(`${setting.padEnd(44)} ${p(all.recall[1])} ${p(all.recall[5])} ${p(all.recall[10])} ${all.mrr.toFixed(3)} | ${cat.join(' ')} | ${cost}`);
}
// Per conversation (TUNE_PER_CONVERSATION=1): R@10 and multi-hop R@10 of each setting in each
// conversation, to see whether a setting chosen on the others carries over to the one left out.
if (process.env.TUNE_PER_CONVERSATION === '1') {
  console.log(`\nper conversation: R@10 / multi-hop R@10 (${conversations.map((c) => c.id).join(', ')})`);
  for (const [setting, rankings] of rows) {
    const cells = conversations.map((c) => {
      const mine = new Map([...evidence].filter(([q]) => q.startsWith(`${c.id}#`)));
      const multi = new Map([...mine].filter(([q]) => category.get(q) === 1));
      return `${p(scoreRankings(rankings, mine).recall[10])}/${p(scoreRankings(rankings, multi).recall[10]).trim()}`;
    });
    console.log(`${setting.padEnd(44)} ${cells.join(' ')}`);
  }
}
