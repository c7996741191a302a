// Schema migrations, applied by the writer thread only, tracked with PRAGMA user_version.
// Append a new entry to MIGRATIONS for every change; never edit an applied one.
//
// Times are integer milliseconds since the epoch (UTC). Memories keep an INTEGER rowid
// (for FTS5 and vec0, which key on it) and a UUID `id` that is the public identifier.

import { docSizeBlobTokensSql, docSizeTokensSql } from './fts-doc-size.js';

/** A row's tokens in memories_fts, in a trigger (`row`: new or old): migration 8's form. */
const rowTokens = (row: string) => `(SELECT ${docSizeTokensSql('hex(sz)')} FROM memories_fts_docsize WHERE id = ${row}.rowid)`;
/** The same read from the blob's bytes directly (migration 11). */
const rowTokensFromBlob = (row: string) => docSizeBlobTokensSql('sz', `FROM memories_fts_docsize WHERE id = ${row}.rowid`);

/** While it holds a row, rows above its rowid are indexed by the writer's flush, not the triggers (migration 12). */
export const TEXT_INDEX_DEFERRED = 'text_index_deferred';

/** The text statistics of indexed rows, by namespace: tokens as the triggers count them (migration 8). */
export const rowsTextStatsSql = (rows: string) => `SELECT m.namespace_id, count(*), sum(${docSizeBlobTokensSql('d.sz')})
  FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid WHERE ${rows} GROUP BY m.namespace_id`;

export const MIGRATIONS: readonly string[] = [
  /* 1 */ `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;

  CREATE TABLE namespaces (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE entities (
    id           TEXT PRIMARY KEY,
    namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (namespace_id, name)
  ) STRICT;

  CREATE TABLE episodes (
    id               TEXT PRIMARY KEY,
    namespace_id     INTEGER NOT NULL REFERENCES namespaces(id),
    started_at       INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL,
    ended_at         INTEGER,
    outcome          TEXT,
    message_count    INTEGER NOT NULL DEFAULT 0
  ) STRICT;

  CREATE TABLE episode_participants (
    episode_id TEXT NOT NULL REFERENCES episodes(id),
    entity_id  TEXT NOT NULL REFERENCES entities(id),
    position   INTEGER NOT NULL,
    PRIMARY KEY (episode_id, entity_id)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE memories (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    namespace_id     INTEGER NOT NULL REFERENCES namespaces(id),
    memory_type      TEXT NOT NULL CHECK (memory_type IN ('episodic', 'semantic', 'procedural')),
    content          TEXT NOT NULL,
    -- normalised content, for de-duplication within an entity
    content_key      TEXT NOT NULL,
    confidence       REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    stability        REAL NOT NULL,
    difficulty       REAL NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_access_at   INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    archived         INTEGER NOT NULL DEFAULT 0,
    extraction_tier  INTEGER NOT NULL,
    -- the owning entity (NULL only for memories of an episode with no single owner)
    entity_id        TEXT REFERENCES entities(id),
    episode_id       TEXT REFERENCES episodes(id),
    -- position in the conversation for episodic memories
    seq              INTEGER,
    role             TEXT
  ) STRICT;
  CREATE INDEX memories_by_entity ON memories(entity_id, content_key);
  CREATE INDEX memories_by_episode ON memories(episode_id, seq);
  CREATE INDEX memories_by_namespace ON memories(namespace_id, archived, memory_type);
  CREATE INDEX memories_by_recency ON memories(namespace_id, created_at);

  -- Entity ↔ memory links for the graph signal and for deletion. relation:
  -- 'owner' (the memory is about this entity), 'participant' (said in its episode),
  -- 'mention' (the text names the entity).
  CREATE TABLE memory_entities (
    memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
    entity_id    TEXT NOT NULL REFERENCES entities(id),
    relation     TEXT NOT NULL,
    PRIMARY KEY (memory_rowid, entity_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX memory_entities_by_entity ON memory_entities(entity_id, relation);

  CREATE VIRTUAL TABLE memories_fts USING fts5(
    content,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
  END;
  `,
  /* 2 */ `
  -- Embedding backlog: rows are stored (and FTS-indexed) at once; vectors arrive later.
  ALTER TABLE memories ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX memories_unembedded ON memories(namespace_id, rowid) WHERE embedded = 0;
  -- Entity names found in query text are matched case-insensitively.
  CREATE INDEX entities_by_lower_name ON entities(namespace_id, lower(name));
  `,
  /* 3 */ `
  -- Consolidation. promoted_into: on an episodic memory, the rowid of the semantic memory it was
  -- promoted into (provenance; a promoted memory is never promoted again). decayed_at: when
  -- consolidation last applied an FSRS decay step (the next waits a full stability interval).
  ALTER TABLE memories ADD COLUMN promoted_into INTEGER;
  ALTER TABLE memories ADD COLUMN decayed_at INTEGER;
  CREATE INDEX memories_promotable ON memories(namespace_id, rowid)
    WHERE memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL;
  CREATE INDEX memories_promoted_into ON memories(promoted_into) WHERE promoted_into IS NOT NULL;
  `,
  /* 4 */ `
  -- Row ids are never reused (AUTOINCREMENT). Background work — vectors computed in the pool,
  -- reinforcement, consolidation plans and its watermark — names memories by rowid; a rowid
  -- freed by a delete and handed to a new memory would let that work land on the wrong one.
  -- SQLite's table rebuild: new table, copy, drop, rename, then indexes and triggers again.
  -- (Runs with foreign keys off; see migrate.ts.)
  CREATE TABLE memories_rebuilt (
    rowid            INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    namespace_id     INTEGER NOT NULL REFERENCES namespaces(id),
    memory_type      TEXT NOT NULL CHECK (memory_type IN ('episodic', 'semantic', 'procedural')),
    content          TEXT NOT NULL,
    content_key      TEXT NOT NULL,
    confidence       REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    stability        REAL NOT NULL,
    difficulty       REAL NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_access_at   INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    archived         INTEGER NOT NULL DEFAULT 0,
    extraction_tier  INTEGER NOT NULL,
    entity_id        TEXT REFERENCES entities(id),
    episode_id       TEXT REFERENCES episodes(id),
    seq              INTEGER,
    role             TEXT,
    embedded         INTEGER NOT NULL DEFAULT 0,
    promoted_into    INTEGER,
    decayed_at       INTEGER
  ) STRICT;
  INSERT INTO memories_rebuilt (rowid, id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty, access_count, last_access_at, created_at, archived, extraction_tier, entity_id, episode_id, seq, role, embedded, promoted_into, decayed_at) SELECT rowid, id, namespace_id, memory_type, content, content_key, confidence, stability, difficulty, access_count, last_access_at, created_at, archived, extraction_tier, entity_id, episode_id, seq, role, embedded, promoted_into, decayed_at FROM memories;
  DROP TABLE memories;
  ALTER TABLE memories_rebuilt RENAME TO memories;
  CREATE INDEX memories_by_entity ON memories(entity_id, content_key);
  CREATE INDEX memories_by_episode ON memories(episode_id, seq);
  CREATE INDEX memories_by_namespace ON memories(namespace_id, archived, memory_type);
  CREATE INDEX memories_by_recency ON memories(namespace_id, created_at);
  CREATE INDEX memories_unembedded ON memories(namespace_id, rowid) WHERE embedded = 0;
  CREATE INDEX memories_promotable ON memories(namespace_id, rowid)
    WHERE memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL;
  CREATE INDEX memories_promoted_into ON memories(promoted_into) WHERE promoted_into IS NOT NULL;
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
  END;
  `,
  /* 5 */ `
  -- IVF vector index (src/workers/ivf): a namespace's vectors are split into cells
  -- around k-means centroids and recall scans only the cells nearest the query. vector_cell is
  -- the cell a memory's vector lives in (memory_vectors keeps the same value as its partition
  -- key \`cell\`); 0 = not assigned yet, a cell every recall scans. Cell ids only grow, and a
  -- training run (a generation) takes a fresh range, so a vector is stale, to be moved, exactly
  -- when its cell is below the newest generation's first cell.
  ALTER TABLE memories ADD COLUMN vector_cell INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX memories_by_vector_cell ON memories(namespace_id, vector_cell) WHERE embedded = 1;
  CREATE TABLE vector_generations (
    generation   INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
    trained_on   INTEGER NOT NULL, -- vectors in the namespace when the centroids were trained
    created_at   INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX vector_generations_by_namespace ON vector_generations(namespace_id, generation);
  CREATE TABLE vector_cells (
    cell       INTEGER PRIMARY KEY AUTOINCREMENT,
    generation INTEGER NOT NULL REFERENCES vector_generations(generation) ON DELETE CASCADE,
    centroid   BLOB NOT NULL -- float32, unit length
  ) STRICT;
  CREATE INDEX vector_cells_by_generation ON vector_cells(generation, cell);
  -- The graph signal's one-hop walk starts from an entity's episodes.
  CREATE INDEX episode_participants_by_entity ON episode_participants(entity_id, episode_id);
  `,
  /* 6 */ `
  -- Conversation context. A question and its answer are often split across two turns, so an
  -- episodic turn is indexed with the turn before it in the same episode as a second FTS
  -- column, \`context\`, which bm25 weighs down (BM25F-style): the turn's own words count fully,
  -- its predecessor's a little. Stored on the row (not looked up when indexing) because the
  -- external-content FTS table must be given the same values again when a row is deleted.
  ALTER TABLE memories ADD COLUMN context TEXT NOT NULL DEFAULT '';
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  UPDATE memories SET context = coalesce((SELECT p.content FROM memories p
      WHERE p.episode_id = memories.episode_id AND p.seq = memories.seq - 1 AND p.memory_type = 'episodic'), '')
    WHERE memory_type = 'episodic' AND episode_id IS NOT NULL AND seq > 0;
  DROP TABLE memories_fts;
  CREATE VIRTUAL TABLE memories_fts USING fts5(
    content,
    context,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
  );
  INSERT INTO memories_fts(memories_fts) VALUES ('rebuild');
  -- Every ORDER BY rank uses these column weights (stored in the FTS table's config): the
  -- previous turn counts 0.3 of the turn's own words (flat optimum 0.2–0.4 on LoCoMo dev).
  INSERT INTO memories_fts(memories_fts, rank) VALUES ('rank', 'bm25(1.0, 0.3)');
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, context ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
  END;

  -- A memory may link one entity in several ways (a turn names a participant: 'participant'
  -- and 'mention'). The old key (memory, entity) let the first link silently swallow the
  -- second, so mention links of episode turns were never written.
  CREATE TABLE memory_entities_rebuilt (
    memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
    entity_id    TEXT NOT NULL REFERENCES entities(id),
    relation     TEXT NOT NULL,
    PRIMARY KEY (memory_rowid, entity_id, relation)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO memory_entities_rebuilt (memory_rowid, entity_id, relation) SELECT memory_rowid, entity_id, relation FROM memory_entities;
  DROP TABLE memory_entities;
  ALTER TABLE memory_entities_rebuilt RENAME TO memory_entities;
  CREATE INDEX memory_entities_by_entity ON memory_entities(entity_id, relation);
  `,
  /* 7 */ `
  -- Event time and supersession (docs/time.md). occurred_at: when an episodic turn was said, or
  -- when a fact became true (valid_from); rows stored before it are taken to have occurred when
  -- stored. valid_until / superseded_by: set when a later fact about the same single-valued
  -- attribute replaced this one (writer/commands/supersession.ts). fact_attribute: that
  -- attribute (shared/fact-attributes.ts; FACT_ATTRIBUTE_FUNCTION, registered by migrate.ts),
  -- indexed so a new fact finds its owner's earlier values without reading every fact.
  -- restored_at: when a deletion snapshot's restore last put the row back (its history's event).
  ALTER TABLE memories ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
  UPDATE memories SET occurred_at = created_at;
  ALTER TABLE memories ADD COLUMN valid_until INTEGER;
  ALTER TABLE memories ADD COLUMN superseded_by TEXT;
  ALTER TABLE memories ADD COLUMN fact_attribute TEXT;
  ALTER TABLE memories ADD COLUMN restored_at INTEGER;
  UPDATE memories SET fact_attribute = memrt_fact_attribute(content) WHERE memory_type = 'semantic';
  CREATE INDEX memories_by_fact_attribute ON memories(entity_id, fact_attribute) WHERE fact_attribute IS NOT NULL;
  CREATE INDEX memories_by_occurrence ON memories(namespace_id, occurred_at);
  `,
  /* 8 */ `
  -- BM25 per namespace. memories_fts holds every namespace's rows, and FTS5's bm25() takes N,
  -- document frequencies and the average length from the whole table: one tenant's scores (which
  -- explain shows) would move with, and so reveal, another's words. The reader scores from these
  -- per-namespace figures instead when the file holds several namespaces
  -- (workers/sqlite/namespace-bm25.ts); the triggers keep them with the index itself.
  CREATE TABLE namespace_text_stats (
    namespace_id INTEGER PRIMARY KEY REFERENCES namespaces(id),
    documents    INTEGER NOT NULL, -- rows in memories_fts (archived included, as FTS5 counts)
    tokens       INTEGER NOT NULL  -- their tokens, every column
  ) STRICT;
  INSERT INTO namespace_text_stats (namespace_id, documents, tokens)
    SELECT m.namespace_id, count(*), sum(${docSizeTokensSql('hex(d.sz)')})
    FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid GROUP BY m.namespace_id;
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
    INSERT INTO namespace_text_stats (namespace_id, documents, tokens) VALUES (new.namespace_id, 1, ${rowTokens('new')})
      ON CONFLICT (namespace_id) DO UPDATE SET documents = documents + 1, tokens = tokens + excluded.tokens;
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    UPDATE namespace_text_stats SET documents = documents - 1, tokens = tokens - ${rowTokens('old')}
      WHERE namespace_id = old.namespace_id;
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, context ON memories BEGIN
    UPDATE namespace_text_stats SET tokens = tokens - ${rowTokens('old')} WHERE namespace_id = old.namespace_id;
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
    UPDATE namespace_text_stats SET tokens = tokens + ${rowTokens('new')} WHERE namespace_id = new.namespace_id;
  END;
  `,
  /* 9 */ `
  -- IVF cells are now seeded with k-means++ on a larger sample (src/workers/ivf/kmeans.ts). A
  -- generation counting 0 trained-on vectors is one the upkeep retrains at its next look
  -- (needsTraining), so existing indexes are rebuilt in the background; recall keeps using
  -- the old cells until the new generation has taken every vector.
  UPDATE vector_generations SET trained_on = 0;
  `,
  /* 10 */ `
  -- A new fact reads only its neighbours on its attribute's timeline (the next later value, the
  -- values valid at its start: writer/commands/supersession.ts): occurred_at in the index makes
  -- that a range seek, not a scan of every earlier value.
  DROP INDEX memories_by_fact_attribute;
  CREATE INDEX memories_by_fact_attribute ON memories(entity_id, fact_attribute, occurred_at) WHERE fact_attribute IS NOT NULL;
  `,
  /* 11 */ `
  -- Write cost (bench:writes). No statement seeks memories by (namespace, occurred_at): time
  -- filters test each candidate row, and a timeline is read through memories_by_fact_attribute.
  -- The index only cost every write an update of one more b-tree.
  DROP INDEX IF EXISTS memories_by_occurrence;
  -- The text-statistics triggers read a row's token count from the docsize blob's bytes instead
  -- of its hex text: the same figures (test/fts-doc-size.test.ts), a fraction of the work.
  DROP TRIGGER IF EXISTS memories_fts_insert;
  DROP TRIGGER IF EXISTS memories_fts_delete;
  DROP TRIGGER IF EXISTS memories_fts_update;
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
    INSERT INTO namespace_text_stats (namespace_id, documents, tokens) VALUES (new.namespace_id, 1, ${rowTokensFromBlob('new')})
      ON CONFLICT (namespace_id) DO UPDATE SET documents = documents + 1, tokens = tokens + excluded.tokens;
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    UPDATE namespace_text_stats SET documents = documents - 1, tokens = tokens - ${rowTokensFromBlob('old')}
      WHERE namespace_id = old.namespace_id;
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, context ON memories BEGIN
    UPDATE namespace_text_stats SET tokens = tokens - ${rowTokensFromBlob('old')} WHERE namespace_id = old.namespace_id;
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
    UPDATE namespace_text_stats SET tokens = tokens + ${rowTokensFromBlob('new')} WHERE namespace_id = new.namespace_id;
  END;
  `,
  /* 12 */ `
  -- Write cost (bench:writes). FTS5 writes the terms it holds to disk, as a new segment, whenever
  -- a savepoint opens or is released; with a savepoint per command (group commit) every row
  -- became a segment of its own, with the merges that follow. The writer's flush now indexes
  -- its rows once, just before COMMIT (writer/sqlite/deferred-text-index.ts): while
  -- ${TEXT_INDEX_DEFERRED} holds a row, these triggers leave every memory above its rowid to that
  -- step. The row is written and deleted inside the flush's transaction, so no committed state
  -- (and no other connection) ever sees it: other writers (the CLI, tests) keep the triggers.
  CREATE TABLE IF NOT EXISTS ${TEXT_INDEX_DEFERRED} (above_rowid INTEGER NOT NULL) STRICT;
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
    WHEN NOT EXISTS (SELECT 1 FROM ${TEXT_INDEX_DEFERRED} WHERE above_rowid < new.rowid) BEGIN
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
    INSERT INTO namespace_text_stats (namespace_id, documents, tokens) VALUES (new.namespace_id, 1, ${rowTokensFromBlob('new')})
      ON CONFLICT (namespace_id) DO UPDATE SET documents = documents + 1, tokens = tokens + excluded.tokens;
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
    WHEN NOT EXISTS (SELECT 1 FROM ${TEXT_INDEX_DEFERRED} WHERE above_rowid < old.rowid) BEGIN
    UPDATE namespace_text_stats SET documents = documents - 1, tokens = tokens - ${rowTokensFromBlob('old')}
      WHERE namespace_id = old.namespace_id;
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, context ON memories
    WHEN NOT EXISTS (SELECT 1 FROM ${TEXT_INDEX_DEFERRED} WHERE above_rowid < old.rowid) BEGIN
    UPDATE namespace_text_stats SET tokens = tokens - ${rowTokensFromBlob('old')} WHERE namespace_id = old.namespace_id;
    INSERT INTO memories_fts(memories_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
    INSERT INTO memories_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
    UPDATE namespace_text_stats SET tokens = tokens + ${rowTokensFromBlob('new')} WHERE namespace_id = new.namespace_id;
  END;
  `,
  /* 13 */ `
  -- GET /v1/episodes lists a namespace's episodes newest started first: read in index order, a
  -- page costs its rows, not a sort of every episode of the namespace. Not (…, started_at, id):
  -- with id in the index SQLite 3.53's OFFSET skipped too few rows beside the list's EXISTS
  -- (test/episode-list.test.ts pages through it); ties on started_at are sorted per run of equals.
  CREATE INDEX IF NOT EXISTS episodes_by_start ON episodes(namespace_id, started_at);
  -- The attribute rule now reads more phrasings and spellings as one attribute ("relocated to",
  -- "favorite color"): facts stored before are read again, so a new fact finds them on its
  -- timeline. Their own places on it stay as they were.
  UPDATE memories SET fact_attribute = memrt_fact_attribute(content)
    WHERE memory_type = 'semantic' AND fact_attribute IS NOT memrt_fact_attribute(content);
  `,
  /* 14 */ `
  -- Each vector attached is stamped with a number that only grows (the writer's, VectorSeq), so
  -- the shared vector codes find every vector attached since they were built, a re-embedding of
  -- an older memory included, without watching rows still waiting for one. Rows embedded before
  -- this migration keep NULL: older than any store (a store is built from every vector).
  ALTER TABLE memories ADD COLUMN vector_seq INTEGER;
  CREATE INDEX memories_by_vector_seq ON memories(namespace_id, vector_seq) WHERE embedded = 1 AND vector_seq IS NOT NULL;
  `,
  /* 15 */ `
  -- Superseded facts by the end of their validity: the vector index upkeep finds the ones whose
  -- valid_until has passed since it last looked and moves their vectors out of the cells a
  -- default recall reads (docs/superseded-vectors.md), reading only those, never every fact.
  CREATE INDEX IF NOT EXISTS memories_superseded ON memories(namespace_id, valid_until) WHERE superseded_by IS NOT NULL;
  `,
  /* 16 */ `
  -- The values of an attribute valid at a new fact's start (writer/commands/supersession.ts)
  -- by validity: seeking valid_until IS NULL and valid_until > the moment reads only those,
  -- where memories_by_fact_attribute's occurred_at < the moment walked every earlier value,
  -- superseded ones included, so each write cost more as the timeline grew.
  CREATE INDEX IF NOT EXISTS memories_valid_facts ON memories(entity_id, fact_attribute, valid_until, occurred_at) WHERE fact_attribute IS NOT NULL;
  `,
];

/** The SQL function migration 7 fills fact_attribute with (a fact's single-valued attribute, or NULL). */
export const FACT_ATTRIBUTE_FUNCTION = 'memrt_fact_attribute';

/** Meta key: episodic rowids up to its value were considered by the namespace's last promotion run. */
export const promotionWatermarkKey = (namespaceId: number) => `promotion_watermark:${namespaceId}`;

/** vec0 needs the dimension at creation; it is created once the embedder is known. */
export function vectorTableSql(dimensions: number): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS memory_vectors USING vec0(
    namespace_id integer partition key,
    cell integer partition key,
    embedding float[${dimensions}] distance_metric=cosine
  )`;
}

/** The IVF cell of vectors not assigned yet (see migration 5). Every recall scans it. */
export const UNASSIGNED_CELL = 0;

/**
 * The vec0 partition of a superseded fact's vector whose IVF cell is `cell` (docs/superseded-vectors.md):
 * negative, so a recall of what is valid now never reads it, and its own inverse, so a recall of
 * the past probes the twins of the cells it probes anyway. memories.vector_cell keeps `cell`.
 */
export function retiredCell(cell: number): number {
  return -1 - cell;
}

/** retiredCell in SQL, over the expression `cell`. */
const retiredCellSql = (cell: string) => `-1 - (${cell})`;

/** The IVF cell of vec0 partition `partition`: a retired twin's true cell, any other as it is. */
export const trueCellSql = (partition: string) => `CASE WHEN ${partition} < 0 THEN ${retiredCellSql(partition)} ELSE ${partition} END`;

/**
 * The vec0 cell of memory `m`'s vector given its IVF cell `cell` (SQL, `@now` bound): the retired
 * twin once the fact is superseded and no longer valid. Every writer of vectors places by it.
 */
export const vectorCellSql = (m: string, cell: string) =>
  `CASE WHEN ${m}.superseded_by IS NOT NULL AND ${m}.valid_until <= @now THEN ${retiredCellSql(cell)} ELSE (${cell}) END`;

/** An episode's turn by position (episode_id, seq): the previous turn is a turn's context (migration 6). */
export const TURN_CONTENT_SQL = "SELECT content FROM memories WHERE episode_id = ? AND seq = ? AND memory_type = 'episodic'";

/** Every insert into memory_vectors: rowid, namespace_id, cell, embedding (BigInt integers). */
export const INSERT_VECTOR_SQL = 'INSERT INTO memory_vectors (rowid, namespace_id, cell, embedding) VALUES (?, ?, ?, ?)';

/** Forgets the IVF index (every vector back in cell 0): its centroids belong to old vectors. */
export const RESET_VECTOR_INDEX_SQL = `
  UPDATE memories SET vector_cell = 0 WHERE vector_cell != 0;
  DELETE FROM vector_cells;
  DELETE FROM vector_generations;`;
