// The row-level write port: the reads and writes of rows the writer's commands are made of, one
// adapter per backend (sqlite/rows.ts, postgres/rows.ts). The rules in commands/ decide; the
// adapters only store and fetch, each in its own dialect.
//
// Every operation is a generator (`Step<T>`), run inside a rule with `yield*`: the SQLite
// adapter's operations return at once without suspending, so a rule runs synchronously inside
// BEGIN IMMEDIATE (run.ts `runNow`); the PostgreSQL adapter's yield their query, which
// `runAwaiting` awaits. Measured against straight-line code with bench/rule-driver.ts.
import type { SnapshotHeaderT } from '../../shared/file-formats.js';
import type { EntityRecord, MemoryType } from '../../shared/schemas.js';
import type { SupersededCursor } from '../../shared/protocol/writer.js';

/** One storage step of a rule; `yield*` it. */
export type Step<T> = Generator<unknown, T, unknown>;

/** How a memory is linked to an entity: about it, said in its episode, or naming it. */
export type Relation = 'owner' | 'participant' | 'mention';

/** A memory row as a rule inserts it (the adapter adds the namespace). */
export interface MemoryInsert {
  id: string;
  type: MemoryType;
  content: string;
  contentKey: string;
  confidence: number;
  stability: number;
  difficulty: number;
  at: number;
  tier: number;
  ownerId: string | null;
  episodeId: string | null;
  seq: number | null;
  role: string | null;
  context: string;
  links: { entityId: string; relation: Relation }[];
  /** When it was said (episodic) or became true (valid_from); migration 7. */
  occurredAt: number;
  /** Set when it arrives already superseded (a reversed import). */
  validUntil: number | null;
  supersededBy: string | null;
  /**
   * Earlier values it supersedes (supersession.ts): once it is stored, each becomes valid until
   * its occurredAt and superseded by its id, as `supersede` does. With the insert, so a backend
   * whose every statement is a round trip sends one.
   */
  supersedes?: readonly Pick<TimelineFact, 'rowid'>[];
  /** The single-valued attribute a semantic fact sets (shared/fact-attributes.ts), indexed for supersession. */
  factAttribute: string | null;
}

/** A fact on an owner's timeline of one attribute, as supersession reads it. */
export interface TimelineFact {
  rowid: number;
  id: string;
  content: string;
  occurred_at: number;
  valid_until: number | null;
}

/** The first page of each of an attribute's timeline reads (factsAfter, factsValidAt) at one moment. */
export interface TimelinePages {
  after: TimelineFact[];
  validAt: TimelineFact[];
}

/** A stored memory as a rule reads it back for de-duplication and answers. */
export interface MemoryRow {
  rowid: number;
  id: string;
  memory_type: MemoryType;
  content: string;
  confidence: number;
  stability: number;
  extraction_tier: number;
  occurred_at: number;
  valid_until: number | null;
  superseded_by: string | null;
}

export interface EpisodeState {
  started_at: number;
  last_activity_at: number;
  ended_at: number | null;
  message_count: number;
}

export interface ReviewState {
  rowid: number;
  stability: number;
  difficulty: number;
  last_access_at: number;
}

/** An open delete: the entity's memories up to `maxRowid` are about to go. */
export interface Hold {
  entityId: string;
  maxRowid: number;
}

/** A removed memory, as the rule needs it (the next turn's context; the snapshot's counts). */
export interface Removed {
  episode_id: string | null;
  seq: number | null;
  memory_type: MemoryType;
}

export interface DecayUpdate {
  rowid: number;
  lastAccessAt: number;
  stability: number;
  difficulty: number;
  decayed: boolean;
  archive: boolean;
  at: number;
}

export interface Generation {
  generation: number;
  /** The generation's first cell (cells only grow). */
  first: number;
}

export interface WriteRows {
  // entities
  /**
   * `fresh`: from the database, past any cache of this node's. A cached entity another node has
   * deleted since is caught by the foreign key of the write that uses it; an answer that writes
   * nothing (POST /v1/entities of an existing name) has no such check, so it reads fresh.
   */
  entityByName(name: string, fresh?: boolean): Step<EntityRecord | undefined>;
  /** Inserts it; a row of that name inserted meanwhile by another node wins and is returned. */
  insertEntity(entity: EntityRecord, createdAt: number): Step<EntityRecord>;

  // memories
  /** A live memory of the entity with this content key and type, above `aboveRowid`. */
  ownedDuplicate(ownerId: string, contentKey: string, type: MemoryType, aboveRowid: number): Step<MemoryRow | undefined>;
  /**
   * ownedDuplicate, and with it the first `limit` rows of factsAfter and of factsValidAt for
   * (ownerId, attribute, at), read at the same moment: what remembering a fact that sets an
   * attribute reads before it writes. Only an adapter whose every read is a round trip
   * (PostgreSQL) has it; one that reads in-process (SQLite) leaves it out, and the rule reads the
   * timeline only when it needs it (not for a fact heard again).
   */
  ownedDuplicateWithTimeline?(ownerId: string, contentKey: string, type: MemoryType, aboveRowid: number,
    attribute: string, at: number, limit: number): Step<{ duplicate: MemoryRow | undefined; timeline: TimelinePages }>;
  raiseConfidence(rowid: number, confidence: number, at: number): Step<void>;
  /** The row and its entity links; answers the new rowid. */
  insertMemory(memory: MemoryInsert): Step<number>;
  /**
   * The owner's live semantic memories that set this attribute and start after `at`, earliest
   * first (occurred_at, rowid), at most `limit` of them past the first `offset`.
   */
  factsAfter(ownerId: string, attribute: string, at: number, offset: number, limit: number): Step<TimelineFact[]>;
  /**
   * Those that start before `at` and are still valid at it (valid_until unset or later), in
   * rowid order, at most `limit` of them past the first `offset`. `manyLater`: whether a full
   * page of factsAfter starts after `at`. The rows are the same either way; an adapter may pick
   * its read by it: which read is cheap depends on where `at` sits on the timeline.
   */
  factsValidAt(ownerId: string, attribute: string, at: number, offset: number, limit: number, manyLater: boolean): Step<TimelineFact[]>;
  /** Marks a memory superseded: valid until `at`, replaced by memory `by`. */
  supersede(rowid: number, at: number, by: string): Step<void>;
  /** An episode's turn's text by position. */
  turnContent(episodeId: string, seq: number): Step<string | undefined>;
  /** How many of these memory ids exist (any namespace). */
  countIds(ids: string[]): Step<number>;
  /** Rowids only grow: every memory written later is above this. */
  maxRowid(): Step<number>;
  /** Some of these memories (by id) are owned by or said in an episode of the hold's entity, at or below its rowid. */
  sourcesHeld(ids: string[], hold: Hold): Step<boolean>;
  /** The same by rowid. */
  rowsHeld(rowids: number[], hold: Hold): Step<boolean>;
  /** Live (unarchived) memories' review state; missing ones are absent. */
  reviewStates(rowids: number[]): Step<ReviewState[]>;
  review(rowid: number, stability: number, lastAccessAt: number): Step<void>;
  /**
   * Removes these memories ([rowid, id]: the id guards against a reused rowid), their links and
   * vectors; ones already gone are skipped. `snapshot` (PostgreSQL): each row is copied into it
   * in the same transaction. Answers what was removed.
   */
  removeMemories(rows: [number, string][], snapshot: SnapshotHeaderT | undefined): Step<Removed[]>;
  /** The facts memory (rowid, id) superseded get its own valid_until and superseded_by (it is about to go). */
  reinstateSupersededBy(rowid: number, id: string): Step<void>;
  /** Some memory (archived or not) is owned by the entity, or links it as owner or participant. */
  entityHasMemories(entityId: string): Step<boolean>;
  /**
   * Removes the entity's record with its episode participations and the mention links memories
   * hold to it; answers whether the record was there. Only once entityHasMemories said no.
   */
  removeEntity(entityId: string): Step<boolean>;
  /** The entity's episode participations ([episode id, position]) for the episodes this namespace holds; present ones kept. */
  putParticipations(entityId: string, episodes: [string, number][]): Step<void>;
  /** How many rows one removeMemories call should get (the rule checks its time budget between calls). */
  readonly removeRound: number;
  /** removeMemories copies each row into the snapshot (PostgreSQL), rather than the snapshot being a file written before. */
  readonly snapshotsInDatabase: boolean;
  /** These turns (episode, seq) lose their context text. */
  clearContext(turns: { episodeId: string; seq: number }[]): Step<void>;

  // episodes
  /** `startedAt`: when the conversation took place; `at`: now (inactivity counts from it). */
  insertEpisode(id: string, at: number, startedAt: number): Step<void>;
  insertParticipant(episodeId: string, entityId: string, position: number): Step<void>;
  episode(id: string): Step<EpisodeState | undefined>;
  participants(episodeId: string): Step<string[]>;
  touchEpisode(id: string, at: number): Step<void>;
  endEpisode(id: string, at: number, outcome: string | null): Step<void>;

  // consolidation
  /** How many of these rowids are live episodic memories not promoted yet. */
  countPromotable(rowids: number[]): Step<number>;
  markPromoted(rowids: number[], into: number): Step<void>;
  /** Applies it when the row is live and unread since planning; answers whether it changed. */
  decay(update: DecayUpdate): Step<boolean>;
  setMeta(key: string, value: string): Step<void>;

  // vectors
  /** The memory's namespace when it exists and has no vector yet (locked for the update). */
  unembedded(rowid: number): Step<number | undefined>;
  putVector(rowid: number, namespaceId: number, cell: number, vector: Float32Array): Step<void>;
  markEmbedded(rowid: number, cell: number): Step<void>;
  linkMentions(rowid: number, entityIds: string[]): Step<void>;
  markUnembeddable(rowids: number[]): Step<void>;
  newestGeneration(namespaceId: number): Step<Generation | undefined>;
  isCellOf(cell: number, generation: number): Step<boolean>;
  insertGeneration(trainedOn: number, at: number): Step<number>;
  insertCell(generation: number, centroid: Float32Array): Step<void>;
  /** An embedded memory of this namespace: its cell, and whether its vector row exists. */
  placement(rowid: number): Step<{ vector_cell: number; has_vector: boolean } | undefined>;
  moveVector(rowid: number, cell: number): Step<void>;
  /** Back to the embedding backlog (marked embedded, but no vector row). */
  unembed(rowid: number): Step<void>;
  /** Some embedded memory of this namespace still lives in a cell below `first`. */
  olderCellsInUse(first: number): Step<boolean>;
  /** Drops the generations below this one (and their cells); answers how many. */
  retireGenerationsBelow(generation: number): Step<number>;
  /**
   * Superseded facts of this namespace after `after` (null: from the first) in (valid_until,
   * rowid) order whose valid_until is no later than `now`, at most `limit`. With placeVector,
   * only an adapter that keeps superseded facts' vectors in retired cells has it (SQLite,
   * docs/superseded-vectors.md); PostgreSQL scores every vector of a probed cell anyway.
   */
  supersededThrough?(after: SupersededCursor | null, now: number, limit: number): Step<SupersededCursor[]>;
  /** Moves the memory's vector into the cell its supersession calls for; answers whether it moved. */
  placeVector?(rowid: number): Step<boolean>;

  // restore (restore.ts): rows put back verbatim, ids and every column kept
  /** Which namespace holds this id (ids are global): whether it is this one, and its name. */
  holderOf(table: IdTable, id: string): Step<{ here: boolean; namespace: string } | undefined>;
  /**
   * A memory as a snapshot holds it, into this namespace with every column the table has (the
   * adapter drops this database's own: rowid, vector state); null when its id is there already.
   */
  insertVerbatim(row: Record<string, unknown>): Step<number | null>;
  insertLink(rowid: number, entityId: string, relation: string): Step<void>;
  /**
   * A restored memory's vector, unassigned to any cell, when it fits this store's vectors (same
   * dimension and embedder); false when it does not (the backfill re-embeds the row). SQLite
   * creates its vector table for the first vector it is given.
   */
  restoreVector(rowid: number, embedding: number[], embedder: string | null): Step<boolean>;
}

/** The tables whose rows carry a public id. */
export type IdTable = 'entities' | 'episodes' | 'memories';
