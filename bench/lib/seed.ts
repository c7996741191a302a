// Seeds a database directly with better-sqlite3, bypassing HTTP: the file is prepared by the
// service's own migrations (same tables, indexes, FTS triggers and vec0 table), then rows are
// inserted in large transactions with vectors already attached, as the service would have
// stored them once its embedding backfill caught up. Orders of magnitude faster than
// `remember` over HTTP, which is what makes 1M memories practical.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { openDatabase, type Db } from '../../src/shared/db.js';
import { INITIAL_DIFFICULTY, DAY_MS, initialStability } from '../../src/shared/fsrs.js';
import { contentKey } from '../../src/shared/text.js';
import { ensureNamespace, migrate } from '../../src/writer/sqlite/migrate.js';
import { prepareVectorTable } from '../../src/writer/sqlite/vector-table.js';
import { HashingEmbedder } from '../../src/workers/embedding/hashing.js';
import { DEFAULT_VECTOR_INDEX_MIN } from '../../src/shared/config.js';
import { blobOf, float32FromBlob } from '../../src/shared/meta.js';
import { INSERT_VECTOR_SQL, UNASSIGNED_CELL } from '../../src/shared/sql-schema.js';
import { VectorCells } from '../../src/workers/sqlite/ivf-cells.js';
import { trainIndex } from '../../src/workers/ivf/kmeans.js';
import { SqliteCommands } from '../../src/writer/sqlite/adapter.js';
import { Corpus } from './corpus.js';
import { note, progress } from './progress.js';

export interface SeedOptions {
  path: string;
  memories: number;
  /**
   * Identity written to the database, and so the embedder the service must run with.
   * Vectors always come from the hashing embedder at `dimensions`: with `id` 'use-lite-512'
   * they are stand-ins (vec0 scans every vector, so KNN cost depends only on count and
   * dimension, not on which model made them).
   */
  embedder: { id: string; dimensions: number };
  seed?: number;
  label?: string;
  /** Build the IVF index from this many memories (default: the service's SERVICE_VECTOR_INDEX_MIN default). */
  vectorIndexMin?: number;
}

export interface SeedResult {
  memories: number;
  entities: number;
  episodes: number;
  seconds: number;
}

const TXN_ROWS = 5_000;
/** About this share of memories are conversation turns (episodic), the rest stored facts. */
const EPISODIC_ROWS = 0.3;
const EPISODE_TURNS = 10;
// Chance that the next draw starts an episode (of EPISODE_TURNS rows) rather than one fact.
const EPISODE_CHANCE = EPISODIC_ROWS / (EPISODE_TURNS * (1 - EPISODIC_ROWS) + EPISODIC_ROWS);

export function entityCountFor(memories: number): number {
  return Math.max(50, Math.round(memories / 20));
}

export async function seedDatabase(options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  for (const suffix of ['', '-wal', '-shm']) rmSync(options.path + suffix, { force: true });
  mkdirSync(dirname(options.path), { recursive: true });
  const db = openDatabase(options.path, { readonly: false, synchronous: 'NORMAL' });
  // Bulk load only: a crash here just means seeding again.
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  migrate(db);
  prepareVectorTable(db, options.embedder, false);
  const ns = ensureNamespace(db, 'default');
  const corpus = new Corpus(options.seed ?? 42, entityCountFor(options.memories));
  const hasher = new HashingEmbedder(options.embedder.dimensions);
  // At the service's default threshold, vectors wait in a staging table and are placed in IVF
  // cells at the end, once (the service would train and move them in the background).
  const indexed = options.memories >= (options.vectorIndexMin ?? DEFAULT_VECTOR_INDEX_MIN);
  if (indexed) db.exec('CREATE TEMP TABLE staged_vectors (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL)');
  const s = statements(db, indexed);
  const now = Date.now();

  const entityIds = new Map<string, string>();
  db.transaction(() => {
    for (const name of corpus.entityNames) {
      const id = randomUUID();
      entityIds.set(name, id);
      s.entity.run(id, ns, name, 'user', now - 120 * DAY_MS);
    }
  })();

  const show = progress(`seed ${options.label ?? ''} ${options.memories.toLocaleString('en')} memories`.replace('  ', ' '), options.memories);
  let stored = 0;
  let episodes = 0;
  while (stored < options.memories) {
    const rows: Row[] = [];
    while (rows.length < TXN_ROWS && stored + rows.length < options.memories) {
      const createdAt = now - Math.floor(corpus.next() * 90 * DAY_MS);
      if (corpus.next() < EPISODE_CHANCE) {
        const turns = Math.min(EPISODE_TURNS, options.memories - stored - rows.length);
        const [a, b] = [corpus.entity(), corpus.entity()];
        const episodeId = randomUUID();
        s.episode.run(episodeId, ns, createdAt, createdAt + turns * 60_000, createdAt + turns * 60_000, turns);
        s.participant.run(episodeId, entityIds.get(a), 0);
        if (b !== a) s.participant.run(episodeId, entityIds.get(b), 1);
        episodes++;
        for (let seq = 0; seq < turns; seq++) {
          rows.push({
            type: 'episodic', content: corpus.message(seq % 2 === 0 ? b : a), confidence: 1, owner: null,
            episode: episodeId, seq, role: seq % 2 === 0 ? 'user' : 'assistant', createdAt: createdAt + seq * 60_000,
            links: [...new Set([a, b])].map((name) => [entityIds.get(name)!, 'participant']),
          });
        }
      } else {
        const owner = corpus.entity();
        const content = corpus.fact(owner);
        const mentioned = mentionIn(content, owner, corpus);
        rows.push({
          type: 'semantic', content, confidence: 0.5 + corpus.next() * 0.5, owner: entityIds.get(owner)!,
          episode: null, seq: null, role: null, createdAt,
          links: [[entityIds.get(owner)!, 'owner'], ...(mentioned ? [[entityIds.get(mentioned)!, 'mention'] as [string, string]] : [])],
        });
      }
    }
    const vectors = await hasher.embed(rows.map((row) => row.content));
    db.transaction(() => {
      rows.forEach((row, i) => insert(s, ns, row, vectors[i], indexed));
    })();
    stored += rows.length;
    show(stored);
  }
  show.done();
  if (indexed) placeInCells(db, ns, options.label ?? '');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { memories: stored, entities: corpus.entityNames.length, episodes, seconds: (performance.now() - started) / 1000 };
}

interface Row {
  type: 'episodic' | 'semantic';
  content: string;
  confidence: number;
  owner: string | null;
  episode: string | null;
  seq: number | null;
  role: string | null;
  createdAt: number;
  links: [string, string][];
}

/** The other entity a fact names (facts are "<owner> … <other> …"), if any. */
function mentionIn(content: string, owner: string, corpus: Corpus): string | null {
  const words = content.split(' ').slice(1);
  for (const word of words) {
    if (word !== owner && /^[A-Z]/.test(word) && corpus.isEntity(word)) return word;
  }
  return null;
}

/**
 * Trains the IVF index with the pool's own code (trainIndex, as VectorIndexMaintenance.train),
 * installs it with the writer's own code, and inserts every staged vector into its cell.
 */
function placeInCells(db: Db, ns: number, label: string): void {
  const cells = new VectorCells(db, ns);
  const started = performance.now();
  const rowids = db.prepare<[], number>('SELECT rowid FROM staged_vectors ORDER BY rowid').pluck().all();
  const staged = db.prepare<[number], Buffer>('SELECT embedding FROM staged_vectors WHERE rowid = ?').pluck();
  const { trainedOn, centroids } = trainIndex(rowids, (rowid) => {
    const blob = staged.get(rowid);
    return blob ? float32FromBlob(blob) : null;
  });
  db.transaction(() => new SqliteCommands(db, { episodeTtlMs: 0 }, ns).run({ type: 'installVectorGeneration', trainedOn, centroids }))();
  note(`IVF ${label}: ${centroids.count} cells trained on ${trainedOn.toLocaleString('en')} vectors in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const total = trainedOn;
  const show = progress(`place ${label} vectors in IVF cells`.replace('  ', ' '), total);
  const insert = db.prepare(INSERT_VECTOR_SQL);
  const setCell = db.prepare('UPDATE memories SET vector_cell = ? WHERE rowid = ?');
  const batch = db.prepare<[number], { rowid: number; embedding: Buffer }>(
    'SELECT rowid, embedding FROM staged_vectors WHERE rowid > ? ORDER BY rowid LIMIT 5000');
  let done = 0;
  for (let after = 0, rows = batch.all(after); rows.length > 0; rows = batch.all(after)) {
    db.transaction(() => {
      for (const row of rows) {
        const cell = cells.assign(float32FromBlob(row.embedding));
        insert.run(BigInt(row.rowid), BigInt(ns), BigInt(cell), row.embedding);
        setCell.run(cell, row.rowid);
      }
    })();
    after = rows[rows.length - 1].rowid;
    done += rows.length;
    show(done);
  }
  db.exec('DROP TABLE staged_vectors');
  show.done();
}

function statements(db: Db, indexed: boolean) {
  return {
    entity: db.prepare('INSERT INTO entities (id, namespace_id, name, kind, created_at) VALUES (?, ?, ?, ?, ?)'),
    episode: db.prepare(`INSERT INTO episodes (id, namespace_id, started_at, last_activity_at, ended_at, message_count)
      VALUES (?, ?, ?, ?, ?, ?)`),
    participant: db.prepare('INSERT OR IGNORE INTO episode_participants (episode_id, entity_id, position) VALUES (?, ?, ?)'),
    // The same columns WriteStore.insertMemory writes, plus embedded = 1 (the vector is attached below).
    memory: db.prepare(`INSERT INTO memories
      (id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty,
       last_access_at, created_at, extraction_tier, entity_id, episode_id, seq, role, embedded)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, 1)`),
    link: db.prepare('INSERT OR IGNORE INTO memory_entities (memory_rowid, entity_id, relation) VALUES (?, ?, ?)'),
    vector: indexed
      ? db.prepare('INSERT INTO staged_vectors (rowid, embedding) VALUES (?, ?)')
      : db.prepare(INSERT_VECTOR_SQL),
  };
}

function insert(s: ReturnType<typeof statements>, ns: number, row: Row, vector: Float32Array, indexed: boolean): void {
  const info = s.memory.run(
    randomUUID(), ns, row.type, row.content, contentKey(row.content), row.confidence,
    initialStability(row.type, row.confidence), INITIAL_DIFFICULTY, row.createdAt, row.createdAt,
    row.owner, row.episode, row.seq, row.role,
  );
  const rowid = BigInt(info.lastInsertRowid);
  for (const [entityId, relation] of row.links) s.link.run(rowid, entityId, relation);
  if (indexed) s.vector.run(rowid, blobOf(vector));
  else s.vector.run(rowid, BigInt(ns), BigInt(UNASSIGNED_CELL), blobOf(vector));
}
