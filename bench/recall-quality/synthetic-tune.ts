// Tuning loop on the synthetic corpus (synthetic.ts builds and writes it the same way): the corpus
// is written once through the service, then the fused ranking is measured once per setting, all
// settings in one process, so a weight chosen on LoCoMo can be checked here cheaply.
//
//   node dist/bench/recall-quality/synthetic-tune.js [--seed N] '' 'adjacent=0.4,reach=2' ...
//   (up=L / down=L …: WordNet expansion as in locomo-wordnet.ts, WORDNET_DICT; TUNE_DEBUG=1: the store's rows by type and state)
//   (SERVICE_EMBEDDER: the stored turns' embedder; TUNE_QUERY_EMBEDDER: the questions', when another)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config.js';
import { createLogger } from '../../src/shared/logger.js';
import { openDatabase } from '../../src/shared/db.js';
import { startService } from '../../src/service.js';
import { SqliteReadPort } from '../../src/workers/sqlite/read-port.js';
import { RecallEngine, type SignalName } from '../../src/workers/recall/engine.js';
import { createEmbedder, embedderIdentity } from '../../src/workers/embedding/index.js';
import { buildCorpus } from './corpus.js';
import { scoreHeader, scoreLine, scoreRankings } from './scoring.js';
import { mixed, namesIn, projectedOut, withoutNames } from './unnamed-query.js';
import { withLexical, type StoredTurn } from './expanded-lexical.js';
import { loadWordNet, wordnetDictPath, type WordNet } from './wordnet.js';
import { wordnetLexical, wordnetSetting } from './wordnet-lexical.js';

// As the service: SERVICE_VECTOR_MIN_SIMILARITY, when set, overrides the embedder's floor.
const floorOverride = process.env.SERVICE_VECTOR_MIN_SIMILARITY ? { SERVICE_VECTOR_MIN_SIMILARITY: process.env.SERVICE_VECTOR_MIN_SIMILARITY } : {};

const seedAt = process.argv.indexOf('--seed');
const seed = seedAt >= 0 ? Number(process.argv[seedAt + 1]) : 42;
const settings = process.argv.slice(2).filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed');
if (settings.length === 0) settings.push('');
const dir = mkdtempSync(join(tmpdir(), 'synthetic-tune-'));
const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(dir, 'memory.db'), SERVICE_RATE_LIMIT: '0', SERVICE_EMBEDDER: process.env.SERVICE_EMBEDDER ?? 'use', ...floorOverride });
const corpus = buildCorpus({ people: 24, sessionsPerPerson: 3, factsPerPerson: 6, seed });
const service = await startService(config, createLogger('silent'));
const episodes: string[] = [];
for (const session of corpus.sessions) {
  const { episode_id } = (await service.operations.startEpisode({ participants: [session.person, 'assistant'] }, { namespace: config.namespace, operator: true })).value;
  episodes.push(episode_id);
  for (const turn of session.turns) await service.operations.addMessage({ episode_id, role: turn.role, content: turn.content }, { namespace: config.namespace, operator: true });
}
await service.backfill.idle();
await service.close();
const db = openDatabase(config.dbPath, { readonly: true });
const namespaceId = (db.prepare('SELECT id FROM namespaces WHERE name = ?').get(config.namespace) as { id: number }).id;
const turnAt = db.prepare<[string, number], { id: string }>('SELECT id FROM memories WHERE episode_id = ? AND seq = ?');
const evidence = new Map<string, Set<string>>();
for (const [i, session] of corpus.sessions.entries()) {
  for (const [seq, turn] of session.turns.entries()) for (const q of turn.answers ?? []) evidence.set(q, new Set([turnAt.get(episodes[i], seq)!.id]));
}
// TUNE_QUERY_EMBEDDER: questions embedded by another embedder than the stored turns (asymmetric).
const embedder = await createEmbedder(process.env.TUNE_QUERY_EMBEDDER ? loadConfig({ SERVICE_PATH: ':memory:', SERVICE_EMBEDDER: process.env.TUNE_QUERY_EMBEDDER }) : config);
const vectors = await embedder.embed(corpus.questions.map((q) => q.text));
// noname=s / proj=s: the query vector without the entities the question names (unnamed-query.ts).
const entityNames = (db.prepare('SELECT name FROM entities WHERE namespace_id = ?').all(namespaceId) as { name: string }[]).map((r) => r.name);
const named = corpus.questions.map((q) => namesIn(q.text, entityNames));
const unnamed = await embedder.embed(corpus.questions.map((q, i) => withoutNames(q.text, named[i])));
const nameVector = new Map((await embedder.embed(entityNames)).map((v, i) => [entityNames[i], v]));
// As the service: SERVICE_VECTOR_MIN_SIMILARITY overrides the embedder's floor.
const minSimilarity = config.vectorMinSimilarity ?? embedderIdentity(config).minSimilarity;
console.log(`synthetic corpus, seed ${seed}: ${corpus.questions.length} questions, embedder ${embedder.id}; fused ranking (all types, limit 10)`);
console.log(scoreHeader('setting', 44) + '  paraphrase R@10');
const now = Date.now();
// up=L / down=L (with x, qx, all): the lexical probe with WordNet expansion (wordnet-lexical.ts),
// on an in-memory copy of the store's lexical index; WORDNET_DICT names the database's folder.
const parsed = settings.map((setting) => wordnetSetting(Object.fromEntries(setting.split(',').filter(Boolean).map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])]))));
let wn: WordNet | null = null;
if (parsed.some((s) => s.wordnet)) {
  const dict = await wordnetDictPath();
  if (!dict) throw new Error('WordNet not found: set WORDNET_DICT');
  wn = loadWordNet(dict);
}
const stored = db.prepare('SELECT rowid AS rowid, content, context FROM memories WHERE namespace_id = ?').all(namespaceId) as StoredTurn[];
if (process.env.TUNE_DEBUG === '1') console.log(JSON.stringify(db.prepare('SELECT memory_type, archived, valid_until IS NULL AS valid, superseded_by IS NULL AS current, count(*) AS n FROM memories WHERE namespace_id = ? GROUP BY 1, 2, 3, 4').all(namespaceId)));
for (const [s, setting] of settings.entries()) {
  const { reach, depth, noname = 0, proj = 0, ...weights } = parsed[s].rest as Partial<Record<SignalName | 'reach' | 'depth' | 'noname' | 'proj', number>>;
  const expanded = parsed[s].wordnet ? wordnetLexical(wn!, stored, parsed[s].wordnet!) : null;
  const queryVector = (i: number) => (noname > 0 ? mixed(vectors[i], unnamed[i], noname)
    : proj > 0 ? projectedOut(vectors[i], named[i].map((n) => nameVector.get(n)!), proj) : vectors[i]);
  const port = new SqliteReadPort(db, namespaceId, config.namespace, { minSimilarity });
  const engine = new RecallEngine(expanded ? withLexical(port, expanded.lexical) : port, { weights, reach, minDepth: depth });
  const ranked = new Map<string, string[]>();
  for (const [i, q] of corpus.questions.entries()) {
    ranked.set(q.id, (await engine.recall({ query: q.text, entity: null, types: null, limit: 10, queryVector: queryVector(i) }, now)).map((h) => h.row.id));
  }
  const paraphrase = new Map([...evidence].filter(([q]) => q.endsWith('paraphrase')));
  console.log(`${scoreLine(setting || '(defaults)', scoreRankings(ranked, evidence), 44)}  ${(scoreRankings(ranked, paraphrase).recall[10] * 100).toFixed(1)}%`);
  expanded?.close();
}
db.close();
rmSync(dir, { recursive: true, force: true });
