// The two files the CLI (and the service's online restore) reads: deletion snapshots (written by the writer before a delete, see
// shared/snapshot-file.ts) and namespace exports (JSON lines, written by `export`). Each is checked
// against these schemas *before* anything is written, so a damaged file changes nothing.
// Extra fields are allowed: a row carries every column of its table, whatever the version.
import Type, { type Static } from 'typebox';
import { ENTITY_KINDS, MAX_CONTENT_LENGTH, MEMORY_TYPES } from './schemas.js';
import { compileValidator } from './validation.js';

const Id = Type.String({ minLength: 1, maxLength: 128 });
const NullableId = Type.Union([Id, Type.Null()]);
const Millis = Type.Integer({ minimum: 0 });

export const MemoryRowFile = Type.Object({
  id: Id,
  memory_type: Type.Enum([...MEMORY_TYPES]),
  // What the API takes: so whatever an import puts in the database, its snapshot line stays
  // under the reader's line bound (shared/snapshot-reader.ts).
  content: Type.String({ maxLength: MAX_CONTENT_LENGTH }),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  stability: Type.Number(),
  created_at: Millis,
  entity_id: NullableId,
  episode_id: NullableId,
  links: Type.Array(Type.Object({ entity_id: Id, relation: Type.String({ minLength: 1 }) })),
  embedding: Type.Union([Type.Array(Type.Number(), { minItems: 1 }), Type.Null()]),
});

export const EntityRowFile = Type.Object({
  id: Id,
  name: Type.String({ minLength: 1 }),
  kind: Type.Enum([...ENTITY_KINDS]),
  created_at: Millis,
});

/**
 * The deleted entity's record. `created_at` and `episodes` (its episode participations, as
 * [episode id, position] pairs) are in snapshots taken since a DELETE also removes the entity
 * record; restore puts them back (an older snapshot's entity is recreated with the restore's time).
 */
export const SnapshotEntity = Type.Object({
  id: Id,
  name: Type.String({ minLength: 1 }),
  kind: Type.String(),
  created_at: Type.Optional(Millis),
  episodes: Type.Optional(Type.Array(Type.Tuple([Id, Type.Integer({ minimum: 0 })]))),
});
export type SnapshotEntityT = Static<typeof SnapshotEntity>;

export const SnapshotHeader = Type.Object({
  format_version: Type.Literal(1),
  snapshot_id: Id,
  captured_at: Type.String({ minLength: 1 }),
  namespace: Type.String({ minLength: 1 }),
  entity: SnapshotEntity,
  embedder: Type.Union([Type.String(), Type.Null()]),
});

export const SnapshotFileSchema = Type.Object({ ...SnapshotHeader.properties, memories: Type.Array(MemoryRowFile) });

/** The last line of a line-framed snapshot (shared/snapshot-file.ts): what a listing shows. */
export const SnapshotSummaryLine = Type.Object({
  memory_count: Millis,
  counts: Type.Object({ episodic: Millis, semantic: Millis, procedural: Millis }),
  vectors: Millis,
});

export const EXPORT_FORMAT = 'memory-runtime-export';
export const EXPORT_FORMAT_VERSION = 1;

export const ExportHeader = Type.Object({
  type: Type.Literal('header'),
  format: Type.Literal(EXPORT_FORMAT),
  format_version: Type.Literal(EXPORT_FORMAT_VERSION),
  namespace: Type.String({ minLength: 1 }),
  namespace_created_at: Millis,
  exported_at: Type.String(),
  embedder: Type.Union([Type.String(), Type.Null()]),
  counts: Type.Object({ entities: Millis, episodes: Millis, memories: Millis }),
});

export const ExportEntity = Type.Object({ type: Type.Literal('entity'), ...EntityRowFile.properties });

export const ExportEpisode = Type.Object({
  type: Type.Literal('episode'),
  id: Id,
  started_at: Millis,
  last_activity_at: Millis,
  participants: Type.Array(Type.Object({ entity_id: Id, position: Type.Integer({ minimum: 0 }) })),
});

export const ExportMemory = Type.Object({ type: Type.Literal('memory'), ...MemoryRowFile.properties });

export type MemoryRowFileT = Static<typeof MemoryRowFile> & Record<string, unknown>;
export type SnapshotFileT = Static<typeof SnapshotFileSchema>;
/** Everything but the memories: what each chunk of an online restore carries along. */
export type SnapshotHeaderT = Omit<SnapshotFileT, 'memories'>;
export type ExportHeaderT = Static<typeof ExportHeader>;

export const validators = {
  snapshot: compileValidator(SnapshotFileSchema, 'snapshot'),
  snapshotHeader: compileValidator(SnapshotHeader, 'snapshot'),
  snapshotMemory: compileValidator(MemoryRowFile, 'memory'),
  snapshotSummary: compileValidator(SnapshotSummaryLine, 'summary'),
  header: compileValidator(ExportHeader, 'header'),
  entity: compileValidator(ExportEntity, 'entity'),
  episode: compileValidator(ExportEpisode, 'episode'),
  memory: compileValidator(ExportMemory, 'memory'),
};
