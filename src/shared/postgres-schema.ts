// The PostgreSQL schema (issue 16): the same tables, columns and meanings as the SQLite
// migrations in sql-schema.ts, so both adapters of the store port answer alike. Applied by the
// writer side at start (src/writer/postgres/migrate.ts), one transaction per entry, tracked in
// `schema_version`; append a new entry for every change, never edit an applied one.
//
// Where PostgreSQL differs from SQLite, and why:
// - memories.rowid is a bigint identity: ids are never reused (as AUTOINCREMENT) and, because a
//   namespace's write batches serialise on pg_advisory_xact_lock (WRITE_LOCK_CLASS below), a
//   namespace's ids grow in commit order — promotion watermarks and forgetBegin's maxRowid rely on it.
// - Text search is a generated tsvector (content weight A, the previous turn's `context` weight D,
//   the BM25F-style down-weighting of migration 6) under a GIN index, instead of FTS5; its
//   configuration (memrt_english, migration 2) folds diacritics and keeps stop words, as FTS5 does.
// - Vectors are float32 bytea rows keyed by memory rowid with the IVF `cell` beside them, under a
//   covering index (namespace_id, cell) INCLUDE (rowid, embedding), instead of vec0: a recall reads
//   the cells it probes from the index alone and scores them in the pool.
// - Deletion snapshots are tables, written in the delete's own transaction (not files).
// Times stay integer milliseconds since the epoch (bigint) and booleans stay integers, so rows
// read from either backend look the same to the code above.

/**
 * A transaction-local setting (set_config(name, 'writer', true)): the writer's flush counts the
 * rows it inserts and deletes itself, and namespace_text_stats' triggers skip its statements
 * (migration 10). Unset in every other session, where the triggers count. Migration 10 spells
 * the name out, as applied migrations must not change: never rename it.
 */
export const COUNTED_BY_WRITER = 'memrt.documents_counted_by';

export const POSTGRES_MIGRATIONS: readonly string[] = [
  /* 1 */ `
  CREATE TABLE meta (
    key   text PRIMARY KEY,
    value text NOT NULL
  );

  CREATE TABLE namespaces (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    created_at bigint NOT NULL
  );

  CREATE TABLE entities (
    id           text PRIMARY KEY,
    namespace_id integer NOT NULL REFERENCES namespaces(id),
    name         text NOT NULL,
    kind         text NOT NULL,
    created_at   bigint NOT NULL,
    UNIQUE (namespace_id, name)
  );
  CREATE INDEX entities_by_lower_name ON entities(namespace_id, lower(name));

  CREATE TABLE episodes (
    id               text PRIMARY KEY,
    namespace_id     integer NOT NULL REFERENCES namespaces(id),
    started_at       bigint NOT NULL,
    last_activity_at bigint NOT NULL,
    ended_at         bigint,
    outcome          text,
    message_count    integer NOT NULL DEFAULT 0
  );

  CREATE TABLE episode_participants (
    episode_id text NOT NULL REFERENCES episodes(id),
    entity_id  text NOT NULL REFERENCES entities(id),
    position   integer NOT NULL,
    PRIMARY KEY (episode_id, entity_id)
  );
  CREATE INDEX episode_participants_by_entity ON episode_participants(entity_id, episode_id);

  CREATE TABLE memories (
    rowid            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               text NOT NULL UNIQUE,
    namespace_id     integer NOT NULL REFERENCES namespaces(id),
    memory_type      text NOT NULL CHECK (memory_type IN ('episodic', 'semantic', 'procedural')),
    content          text NOT NULL,
    content_key      text NOT NULL,
    confidence       double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    stability        double precision NOT NULL,
    difficulty       double precision NOT NULL,
    access_count     integer NOT NULL DEFAULT 0,
    last_access_at   bigint NOT NULL,
    created_at       bigint NOT NULL,
    archived         integer NOT NULL DEFAULT 0,
    extraction_tier  integer NOT NULL,
    entity_id        text REFERENCES entities(id),
    episode_id       text REFERENCES episodes(id),
    seq              integer,
    role             text,
    -- 0: waiting for its vector, 1: embedded, -1: the embedder rejected the text (migration 2)
    embedded         integer NOT NULL DEFAULT 0,
    promoted_into    bigint,
    decayed_at       bigint,
    vector_cell      bigint NOT NULL DEFAULT 0,
    context          text NOT NULL DEFAULT '',
    search           tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('english'::regconfig, content), 'A') ||
      setweight(to_tsvector('english'::regconfig, context), 'D')) STORED
  );
  CREATE INDEX memories_by_entity ON memories(entity_id, content_key);
  CREATE INDEX memories_by_episode ON memories(episode_id, seq);
  CREATE INDEX memories_by_namespace ON memories(namespace_id, archived, memory_type);
  CREATE INDEX memories_by_recency ON memories(namespace_id, created_at);
  CREATE INDEX memories_unembedded ON memories(namespace_id, rowid) WHERE embedded = 0;
  CREATE INDEX memories_promotable ON memories(namespace_id, rowid)
    WHERE memory_type = 'episodic' AND archived = 0 AND promoted_into IS NULL;
  CREATE INDEX memories_promoted_into ON memories(promoted_into) WHERE promoted_into IS NOT NULL;
  CREATE INDEX memories_by_vector_cell ON memories(namespace_id, vector_cell) WHERE embedded = 1;
  CREATE INDEX memories_search ON memories USING gin (search);

  CREATE TABLE memory_entities (
    memory_rowid bigint NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
    entity_id    text NOT NULL REFERENCES entities(id),
    relation     text NOT NULL,
    PRIMARY KEY (memory_rowid, entity_id, relation)
  );
  CREATE INDEX memory_entities_by_entity ON memory_entities(entity_id, relation);

  -- One float32 vector per embedded memory (rowid = the memory's). The covering index is created
  -- with the table's dimension known (postgresVectorIndexSql): see there.
  CREATE TABLE memory_vectors (
    rowid        bigint PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
    namespace_id integer NOT NULL REFERENCES namespaces(id),
    cell         bigint NOT NULL DEFAULT 0,
    embedding    bytea NOT NULL
  );

  CREATE TABLE vector_generations (
    generation   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace_id integer NOT NULL REFERENCES namespaces(id),
    trained_on   integer NOT NULL,
    created_at   bigint NOT NULL
  );
  CREATE INDEX vector_generations_by_namespace ON vector_generations(namespace_id, generation);
  CREATE TABLE vector_cells (
    cell       bigint GENERATED ALWAYS AS IDENTITY (START WITH 1) PRIMARY KEY,
    generation bigint NOT NULL REFERENCES vector_generations(generation) ON DELETE CASCADE,
    centroid   bytea NOT NULL -- float32, unit length
  );
  CREATE INDEX vector_cells_by_generation ON vector_cells(generation, cell);

  -- Deletion snapshots (the SQLite build writes them as files, shared/snapshot-file.ts): the
  -- header, then one row per memory in the file format's shape (MemoryRowFile: columns, links,
  -- embedding), inserted by the writer in the same transaction that deletes the memory.
  CREATE TABLE deletion_snapshots (
    snapshot_id  text PRIMARY KEY,
    namespace_id integer NOT NULL REFERENCES namespaces(id),
    captured_at  text NOT NULL,
    entity       jsonb NOT NULL, -- {id, name, kind}
    embedder     text
  );
  CREATE INDEX deletion_snapshots_by_namespace ON deletion_snapshots(namespace_id, captured_at);
  CREATE TABLE deletion_snapshot_memories (
    snapshot_id  text NOT NULL REFERENCES deletion_snapshots(snapshot_id) ON DELETE CASCADE,
    memory_rowid bigint NOT NULL, -- the deleted row's rowid: the snapshot's order
    memory       jsonb NOT NULL,
    PRIMARY KEY (snapshot_id, memory_rowid)
  );
  `,
  /* 2 */ `
  -- Text search as SQLite's FTS5 tokenizer ('porter unicode61 remove_diacritics 2') does it:
  -- diacritics folded ("Café" = "cafe") and every word kept — the 'english' configuration drops
  -- stop words, so "The Who" matched nothing. unaccent ships with PostgreSQL (contrib; in
  -- Debian's postgresql-15) and is a trusted extension, so a database owner may create it.
  -- The search column is regenerated with the new configuration (a generated column's
  -- expression cannot be altered in PostgreSQL 15), which drops and rebuilds its GIN index.
  CREATE EXTENSION IF NOT EXISTS unaccent;
  CREATE TEXT SEARCH DICTIONARY memrt_english_stem (TEMPLATE = snowball, Language = english);
  CREATE TEXT SEARCH CONFIGURATION memrt_english (COPY = english);
  ALTER TEXT SEARCH CONFIGURATION memrt_english
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, memrt_english_stem;
  ALTER TABLE memories DROP COLUMN search;
  ALTER TABLE memories ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('memrt_english'::regconfig, content), 'A') ||
    setweight(to_tsvector('memrt_english'::regconfig, context), 'D')) STORED;
  CREATE INDEX memories_search ON memories USING gin (search);
  `,
  /* 3 */ `
  -- A B-tree entry holds at most ~2.7 kB: keyed on the fact's text itself, any hard-to-compress
  -- fact longer than that (facts may be 64 KiB) failed to insert. The duplicate check looks the
  -- fact up by its digest and then compares the text (store.ts storeOwned).
  DROP INDEX memories_by_entity;
  CREATE INDEX memories_by_entity ON memories(entity_id, md5(content_key));
  `,
  /* 4 */ `
  -- Deletes and restores in progress on any node (src/core/cluster-turns.ts), so another node's
  -- conflicting one waits or is refused as on one node: a DELETE of \`entity\` (a name), or a
  -- restore (entity NULL), by \`node\`, for as long as its lease is renewed. A crashed node's entry
  -- lapses at lease_until (the database's clock).
  CREATE TABLE open_deletions (
    id           text PRIMARY KEY,
    namespace_id integer NOT NULL REFERENCES namespaces(id),
    entity       text,
    node         text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    lease_until  timestamptz NOT NULL
  );
  CREATE INDEX open_deletions_by_namespace ON open_deletions(namespace_id, entity);
  `,
  /* 5 */ `
  -- Event time and supersession, as SQLite's migration 7 (docs/time.md). Facts stored before it
  -- get their fact_attribute from the writer's own rule after this runs (migrate.ts), since
  -- the rule is JavaScript.
  ALTER TABLE memories ADD COLUMN occurred_at bigint;
  UPDATE memories SET occurred_at = created_at;
  ALTER TABLE memories ALTER COLUMN occurred_at SET NOT NULL;
  ALTER TABLE memories ADD COLUMN valid_until bigint;
  ALTER TABLE memories ADD COLUMN superseded_by text;
  ALTER TABLE memories ADD COLUMN fact_attribute text;
  ALTER TABLE memories ADD COLUMN restored_at bigint;
  CREATE INDEX memories_by_fact_attribute ON memories(entity_id, fact_attribute) WHERE fact_attribute IS NOT NULL;
  CREATE INDEX memories_by_occurrence ON memories(namespace_id, occurred_at);
  `,
  /* 6 */ `
  -- BM25's N per namespace: the lexical signal's idf took pg_class.reltuples, the rows of every
  -- namespace, so one tenant's scores moved with another's data (workers/postgres/lexical.ts).
  -- Kept by statement triggers; a namespace's writes already serialise on its advisory lock, so
  -- the row's lock costs no extra waiting.
  CREATE TABLE namespace_text_stats (
    namespace_id integer PRIMARY KEY REFERENCES namespaces(id),
    documents    bigint NOT NULL
  );
  INSERT INTO namespace_text_stats (namespace_id, documents)
    SELECT namespace_id, count(*) FROM memories GROUP BY namespace_id;
  CREATE FUNCTION memrt_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO namespace_text_stats (namespace_id, documents)
      SELECT namespace_id, count(*) FROM inserted GROUP BY namespace_id ORDER BY namespace_id
      ON CONFLICT (namespace_id) DO UPDATE SET documents = namespace_text_stats.documents + excluded.documents;
    RETURN NULL;
  END $$;
  CREATE FUNCTION memrt_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE namespace_text_stats s SET documents = s.documents - d.n
      FROM (SELECT namespace_id, count(*) AS n FROM deleted GROUP BY namespace_id) d WHERE s.namespace_id = d.namespace_id;
    RETURN NULL;
  END $$;
  CREATE TRIGGER memories_counted_insert AFTER INSERT ON memories REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION memrt_count_inserted();
  CREATE TRIGGER memories_counted_delete AFTER DELETE ON memories REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION memrt_count_deleted();
  `,
  /* 7 */ `
  -- IVF cells are now seeded with k-means++ on a larger sample: a generation counting 0
  -- trained-on vectors is retrained by the upkeep at its next look (as SQLite migration 9).
  UPDATE vector_generations SET trained_on = 0;
  `,
  /* 8 */ `
  -- As SQLite's migration 10: occurred_at in the index, so a new fact's neighbours on its
  -- attribute's timeline are a range seek (writer/commands/supersession.ts).
  DROP INDEX memories_by_fact_attribute;
  CREATE INDEX memories_by_fact_attribute ON memories(entity_id, fact_attribute, occurred_at) WHERE fact_attribute IS NOT NULL;
  `,
  /* 9 */ `
  -- As SQLite's migration 13: GET /v1/episodes reads a namespace's episodes newest started first
  -- in index order. The attribute rule now reads more phrasings and spellings as one attribute:
  -- migrate.ts fills fact_attribute again after this runs.
  CREATE INDEX IF NOT EXISTS episodes_by_start ON episodes(namespace_id, started_at);
  `,
  /* 10 */ `
  -- Write cost (bench:writes): the statement triggers ran an upsert of the namespace's row after
  -- every INSERT, 64 times in a flush of 64 remembers. The writer now counts the rows its flush
  -- inserted and deleted and adds them once per namespace before COMMIT
  -- (writer/postgres/document-counts.ts), in a transaction where it set
  -- memrt.documents_counted_by = 'writer'. (PostgreSQL still fills a skipped trigger's transition
  -- table: the per-row copy stays, measured as negligible.) The triggers stay for every other session (the CLI's
  -- copy, an operator's SQL) and skip the writer's. The counts stay exact: a statement is counted
  -- once, by the writer or by the triggers, and both are undone with the transaction.
  DROP TRIGGER memories_counted_insert ON memories;
  DROP TRIGGER memories_counted_delete ON memories;
  CREATE TRIGGER memories_counted_insert AFTER INSERT ON memories REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT WHEN (current_setting('memrt.documents_counted_by', true) IS DISTINCT FROM 'writer')
    EXECUTE FUNCTION memrt_count_inserted();
  CREATE TRIGGER memories_counted_delete AFTER DELETE ON memories REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT WHEN (current_setting('memrt.documents_counted_by', true) IS DISTINCT FROM 'writer')
    EXECUTE FUNCTION memrt_count_deleted();
  `,
  /* 11 */ `
  -- Write cost (bench:writes): every inserted row updated this b-tree, and no statement reads it —
  -- none filters or orders a namespace's memories by created_at (EXPLAIN on 100,000 rows: every
  -- plan the same without it). memories_by_occurrence stays: a recall's narrow time window reads
  -- its lexical candidates through it (a 1-day window 0.1 ms with it, ~4 ms without);
  -- memories_by_fact_attribute is partial already and seeks each new fact's timeline.
  DROP INDEX IF EXISTS memories_by_recency;
  `,
  /* 12 */ `
  -- Was: CREATE INDEX memories_valid_facts (entity_id, fact_attribute, valid_until, occurred_at)
  -- WHERE fact_attribute IS NOT NULL, which migration 13 drops (why there). Emptied so that a
  -- database upgrading past both does not build an index over every row only to drop it; one
  -- that ran it loses the index through 13 all the same.
  SELECT 1;
  `,
  /* 13 */ `
  -- Migration 12's index undone: with valid_until indexed, superseding a fact (which sets it) can
  -- no longer be a HOT update, so every supersede also wrote new entries into every index of
  -- memories, the GIN text index included — remember throughput fell as the table grew (bench:writes,
  -- 5 growing rounds: 2,082 → 1,312 remembers/s, flat ~2,350 without it). The timeline read seeks
  -- memories_by_fact_attribute as before.
  DROP INDEX IF EXISTS memories_valid_facts;
  `,
];

/**
 * The migrations after which facts' fact_attribute is (re)filled by migrate.ts from the writer's
 * rule: the one that added the column, and each that widened the rule.
 */
export const PG_FACT_ATTRIBUTE_MIGRATIONS: readonly number[] = [5, 9];

/**
 * The text search configuration of the `search` column (migration 2). Queries must build their
 * tsquery with the same one, or the words are stemmed and folded differently from the rows'.
 */
export const TEXT_SEARCH_CONFIG = 'memrt_english';

/**
 * Lock classes of the two-key advisory locks (pg_advisory_xact_lock(class, key)), so the
 * service's locks never collide with each other or with an operator's own.
 * WRITE: key = namespace id; every write batch takes it first, so a namespace's batches
 * serialise across nodes and its rowids follow commit order. MIGRATE: key 0; nodes starting
 * together migrate one at a time. OPEN_DELETIONS: key = namespace id; a node checks
 * open_deletions and registers its delete or restore under it (src/core/cluster-turns.ts).
 * Background jobs (session locks, pg_try_advisory_lock(class, namespace id); src/core/jobs/
 * postgres-job-locks.ts): EMBEDDING_BACKFILL, VECTOR_INDEX and CONSOLIDATION_SCHEDULE are held by
 * one node from the first run it makes until its session ends, so that node alone runs the job
 * for the namespace; CONSOLIDATION_RUN is held for the length of one consolidation run, manual or
 * scheduled, so no two run at once anywhere.
 */
export const PG_LOCK_CLASS = {
  write: 0x6d72_0001,
  migrate: 0x6d72_0002,
  openDeletions: 0x6d72_0003,
  embeddingBackfill: 0x6d72_0010,
  vectorIndex: 0x6d72_0011,
  consolidationSchedule: 0x6d72_0012,
  consolidationRun: 0x6d72_0013,
} as const;

/**
 * B-tree entries are limited to about a third of a page (2,704 bytes with 8 kB pages): a float32
 * vector fits as an INCLUDE column up to 640 dimensions (2,560 bytes plus keys). Larger vectors
 * (e.g. 1,536-d OpenAI ones) get the plain (namespace_id, cell) index and are read from the heap.
 */
export const MAX_COVERED_DIMENSIONS = 640;

/** The IVF scan index for vectors of this dimension (idempotent; run once the embedder is known). */
export function postgresVectorIndexSql(dimensions: number): string {
  return dimensions <= MAX_COVERED_DIMENSIONS
    ? 'CREATE INDEX IF NOT EXISTS memory_vectors_by_cell ON memory_vectors (namespace_id, cell) INCLUDE (rowid, embedding)'
    : 'CREATE INDEX IF NOT EXISTS memory_vectors_by_cell ON memory_vectors (namespace_id, cell)';
}
