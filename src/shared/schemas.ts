// The TypeBox schemas of the operations' inputs and outputs (declared in shared/operations/).
// They drive REST validation, MCP tool input schemas, the client's types and the OpenAPI
// document — a body is never described twice. A field's default is written here and nowhere
// else: validation applies it (see defaults.ts).
import Type, { type Static, type TSchema } from 'typebox';
import { ANY_WRONG_VALUE_IS_400 } from './value-rules.js';
import { defaultOf, withDefault, type Parsed } from './defaults.js';
import { EVENT_TIME_PATTERN } from './event-time.js';

export const MEMORY_TYPES = ['episodic', 'semantic', 'procedural'] as const;
export const ENTITY_KINDS = ['agent', 'user', 'team', 'tool'] as const;
export const OUTCOMES = ['success', 'failure', 'partial'] as const;
export const GROUP_ORDERS = ['chronological', 'relevance'] as const;

export const MAX_LIMIT = 1000;
export const MAX_NAME_LENGTH = 512;
export const MAX_CONTENT_LENGTH = 100_000;
export const MAX_QUERY_LENGTH = 10_000;
export const MAX_PARTICIPANTS = 100;
/** remember/batch: facts per call (docs/time.md). */
export const MAX_BATCH_FACTS = 1000;
/** episodes/import: messages per call (each a row of the call's one transaction). */
export const MAX_IMPORT_MESSAGES = 10_000;

export type MemoryType = (typeof MEMORY_TYPES)[number];
export type EntityKind = (typeof ENTITY_KINDS)[number];
export type Outcome = (typeof OUTCOMES)[number];
export type GroupOrder = (typeof GROUP_ORDERS)[number];

const EntityName = Type.String({
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  description: 'Entity name: any UTF-8 text, 1–512 characters',
});
const Limit = Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Maximum results (1–${MAX_LIMIT})` });
const Confidence = Type.Number({ minimum: 0, maximum: 1 });
const MemoryTypeName = Type.Enum([...MEMORY_TYPES]);
/** An event time as clients send it (see event-time.ts). */
const EventTime = (description: string) => Type.String({ maxLength: 64, pattern: EVENT_TIME_PATTERN, description });
/** Recall's time filters (docs/time.md), shared by recall and recall_grouped. */
const RecallTimeFields = {
  as_of: Type.Optional(EventTime('Return what was valid at this time (ISO 8601 with offset) rather than now; memories that occurred later are left out')),
  include_superseded: withDefault(Type.Boolean({ description: 'Also return facts a later fact superseded (each with valid_until and superseded_by set)' }), false),
  since: Type.Optional(EventTime('Only memories that occurred at or after this time')),
  until: Type.Optional(EventTime('Only memories that occurred at or before this time')),
};

// ---------------------------------------------------------------- requests
// Every object a request takes is closed: a field not listed is refused (closed-schemas.ts). The
// few extras known clients send are listed, marked `deprecated` (JSON Schema: accepted, not to be
// relied on) and ignored: see docs/api-behaviour.md, "Unknown fields".

/**
 * `cursor` on recall, recall_grouped and inspect, as clients written for paged APIs send it. No
 * answer here carries a cursor (raise `limit`), so the only cursor a client can hold is none:
 * null is accepted and ignored; any other value would ask for a page this service cannot give.
 */
const NoCursor = Type.Optional(Type.Null({
  deprecated: true,
  description: 'Accepted for compatibility and ignored: no answer carries a cursor (raise limit for more). Only null.',
  [ANY_WRONG_VALUE_IS_400]: true,
}));

export const CreateEntityBody = Type.Object({
  name: EntityName,
  kind: withDefault(Type.Enum([...ENTITY_KINDS]), 'user'),
});

/** The kind of an entity created on first use (remember, episode participants): POST /v1/entities's default. */
export const FIRST_USE_KIND: EntityKind = defaultOf(CreateEntityBody, 'kind');

export const RememberBody = Type.Object({
  entity: EntityName,
  fact: Type.String({ minLength: 1, maxLength: MAX_CONTENT_LENGTH }),
  confidence: withDefault(Confidence, 0.8),
  valid_from: Type.Optional(EventTime('When the fact became true (ISO 8601 with offset); default now. A later fact about the same attribute supersedes it')),
});

export const RecallBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_LENGTH }),
  entity: withDefault(Type.Union([EntityName, Type.Null()]), null),
  limit: withDefault(Limit, 5),
  types: withDefault(Type.Union([Type.Array(MemoryTypeName, { maxItems: 3 }), Type.Null()]), null),
  explain: withDefault(Type.Boolean({ description: "Add each memory's explanation: every signal's rank and contribution to its score" }), false),
  ...RecallTimeFields,
  cursor: NoCursor,
});

export const RecallGroupedBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_LENGTH }),
  // As in recall: an entity nothing was stored for has no memories, so no groups (never everything).
  entity: withDefault(Type.Union([EntityName, Type.Null()], { description: "Restricts to one entity's memories, as recall's entity does" }), null),
  limit: withDefault(Limit, 50),
  // The contract: any `order` other than the two names is 400, whatever its JSON type.
  order: withDefault(Type.Enum([...GROUP_ORDERS], { [ANY_WRONG_VALUE_IS_400]: true }), 'chronological'),
  max_groups: withDefault(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_LIMIT }), Type.Null()]), null),
  explain: withDefault(Type.Boolean({ description: "Add each memory's explanation, as recall does" }), false),
  ...RecallTimeFields,
  cursor: NoCursor,
});

export const StartEpisodeBody = Type.Object({
  participants: Type.Array(EntityName, { minItems: 1, maxItems: MAX_PARTICIPANTS }),
  started_at: Type.Optional(EventTime('When the conversation took place (ISO 8601 with offset); default now. recall_grouped\'s session_time')),
});

const MessageFields = {
  role: Type.String({ minLength: 1, maxLength: 64, description: 'Speaker role, for example user or assistant' }),
  content: Type.String({ minLength: 1, maxLength: MAX_CONTENT_LENGTH }),
  occurred_at: Type.Optional(EventTime('When the message was said (ISO 8601 with offset); default now')),
};
const EpisodeId = Type.String({ minLength: 1, maxLength: 64, description: 'Episode id returned by start' });
const OutcomeField = withDefault(Type.Union([Type.Enum([...OUTCOMES]), Type.Null()]), null);

/**
 * The episode id in the body of a route that has it in the path, as some SDKs send both: accepted
 * when it is the path's id, 400 when it names another episode (http/routes.ts).
 */
const RepeatedEpisodeId = Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Accepted when it is the path's episode id (some SDKs send both); another id is 400" }));

export const EpisodeMessageBody = Type.Object({ episode_id: RepeatedEpisodeId, ...MessageFields });
/** Compatibility form: `POST /v1/episodes/message` with the id in the body. */
export const EpisodeMessageByBody = Type.Object({ episode_id: EpisodeId, ...MessageFields });

export const EndEpisodeBody = Type.Object({ episode_id: RepeatedEpisodeId, outcome: OutcomeField });
/** Compatibility form: `POST /v1/episodes/end` with the id in the body. */
export const EndEpisodeByBody = Type.Object({ episode_id: EpisodeId, outcome: OutcomeField });

export const ImportEpisodeBody = Type.Object({
  participants: Type.Array(EntityName, { minItems: 1, maxItems: MAX_PARTICIPANTS }),
  started_at: Type.Optional(EventTime('When the conversation took place (ISO 8601 with offset); default now')),
  outcome: OutcomeField,
  messages: Type.Array(Type.Object({
    ...MessageFields,
    occurred_at: Type.Optional(EventTime("When the message was said (ISO 8601 with offset); default: the previous message's time, the first message's started_at")),
  }), { minItems: 1, maxItems: MAX_IMPORT_MESSAGES, description: `The conversation in order (1–${MAX_IMPORT_MESSAGES})` }),
});

/**
 * remember/batch. Each item is checked as remember's body on its own (an invalid one is reported
 * in its result, the others are stored), so here an item only has its fields' JSON types: a
 * missing field, a value out of range or a time that is not one is the item's error, not the call's.
 */
export const RememberBatchBody = Type.Object({
  facts: Type.Array(Type.Object({
    entity: Type.Optional(Type.String({ description: "As remember's entity" })),
    fact: Type.Optional(Type.String({ description: "As remember's fact" })),
    confidence: Type.Optional(Type.Number({ description: "As remember's confidence (default 0.8)" })),
    valid_from: Type.Optional(Type.String({ description: "As remember's valid_from (default now)" })),
  }), {
    minItems: 1, maxItems: MAX_BATCH_FACTS, description: `1–${MAX_BATCH_FACTS} facts, each as remember's body; each is stored or reported on its own`,
  }),
});

export const InspectBody = Type.Object({
  entity: EntityName,
  limit: withDefault(Limit, 50),
  include_superseded: withDefault(Type.Boolean({ description: 'Also list facts a later fact superseded' }), false),
  cursor: NoCursor,
});

export const ForgetParams = Type.Object({ entity_name: EntityName });
/** DELETE's query: accepted for compatibility and ignored, every delete is snapshot-backed. */
export const ForgetQuery = Type.Object({ hard_delete: Type.Optional(Type.Boolean({ description: 'Accepted and ignored' })) });
/** DELETE's body, which some clients send instead of the query: the same flag, accepted and ignored. */
export const ForgetBody = Type.Object({ hard_delete: Type.Optional(Type.Boolean({ deprecated: true, description: 'Accepted and ignored (the query parameter is the documented form)' })) });

export const EmptyBody = Type.Object({});

export const MAX_ENTITY_PAGE = 500;
/** GET /v1/entities query string (numbers arrive as text; see http/query.ts). */
export const ListEntitiesQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, description: 'Case-insensitive substring of the name' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ENTITY_PAGE, default: 50, description: `Page size (1–${MAX_ENTITY_PAGE})` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Entities to skip (by name order)' })),
});

/** Most namespaces one GET /v1/namespaces answer lists (each costs a count of its rows). */
export const MAX_NAMESPACE_PAGE = 1000;
export const ListNamespacesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_NAMESPACE_PAGE, default: MAX_NAMESPACE_PAGE, description: `Page size (1–${MAX_NAMESPACE_PAGE})` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Namespaces to skip (in creation order)' })),
});

/** GET /v1/episodes query string (the console's episodes view). */
export const ListEpisodesQuery = Type.Object({
  entity: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'Only episodes this entity took part in (its exact name)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ENTITY_PAGE, default: 50, description: `Page size (1–${MAX_ENTITY_PAGE})` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Episodes to skip (newest started first)' })),
});

export const SnapshotParams = Type.Object({
  snapshot_id: Type.String({ format: 'uuid', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'Snapshot id returned by DELETE /v1/entities/{name}' }),
});

export const MemoryParams = Type.Object({
  memory_id: Type.String({ minLength: 1, maxLength: 128, description: 'A memory id, as answers give it' }),
});

// --------------------------------------------------------------- responses

export const Entity = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  kind: Type.Enum([...ENTITY_KINDS]),
});

export const EXPLAINED_SIGNALS = ['lexical', 'vector', 'feedback', 'adjacent', 'session', 'entity', 'tie_break', 'time'] as const;
export const Explanation = Type.Object({
  score: Type.Number({ description: 'The fused score the ranking used (unrounded); the contributions add up to it' }),
  signals: Type.Array(Type.Object({
    signal: Type.Enum([...EXPLAINED_SIGNALS]),
    rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "1-based rank in the signal's own list; null when it has none" }),
    raw: Type.Union([Type.Number(), Type.Null()], { description: 'The signal\'s raw value (bm25, cosine, neighbour score, confidence × recency)' }),
    weight: Type.Number(),
    contribution: Type.Number(),
  })),
}, { description: 'Present only when the request asked for explain: true' });

/** What every answer says about a memory. */
const MemoryFields = {
  id: Type.String({ format: 'uuid' }),
  content: Type.String(),
  memory_type: MemoryTypeName,
  confidence: Confidence,
  stability: Type.Number(),
};

/** When a memory happened or held (docs/time.md); who said an episodic one, and in which episode. */
const MemoryTimeFields = {
  occurred_at: Type.Optional(Type.String({ format: 'date-time', description: 'Episodic: when it was said; semantic and procedural: when it became true (valid_from)' })),
  valid_until: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Semantic: when a later fact superseded it; null while current' })),
  superseded_by: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Semantic: the id of the memory that superseded it; null while current' })),
  role: Type.Optional(Type.String({ description: 'Episodic: the speaker role of the turn' })),
  episode_id: Type.Optional(Type.String({ description: 'Episodic: the episode (session) the turn belongs to' })),
};

export const Memory = Type.Object({
  ...MemoryFields, score: Type.Optional(Type.Union([Type.Number(), Type.Null()])), explanation: Type.Optional(Explanation),
  ...MemoryTimeFields,
});
export const StoredFact = Type.Object({ ...MemoryFields, extraction_tier: Type.Integer(), ...MemoryTimeFields });

export const Contradiction = Type.Object({
  description: Type.String(),
  memory_ids: Type.Optional(Type.Array(Type.String(), { description: 'The ids of the two memories in conflict' })),
});

export const RecallResponse = Type.Object({
  memories: Type.Array(Memory),
  contradictions: Type.Array(Contradiction),
});

export const Group = Type.Object({
  session_id: Type.Union([Type.String(), Type.Null()]),
  session_time: Type.String({ format: 'date-time' }),
  group_score: Type.Number(),
  memories: Type.Array(Memory),
});

export const RecallGroupedResponse = Type.Object({ groups: Type.Array(Group) });
export const StartEpisodeResponse = Type.Object({ episode_id: Type.String({ format: 'uuid' }) });
export const ImportEpisodeResponse = Type.Object({
  episode_id: Type.String({ format: 'uuid' }),
  memories_created: Type.Integer({ minimum: 0 }),
  extraction_tier: Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'As for end: 1 the offline rules, 2 the LLM endpoint' }),
});
export const BatchItemResult = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the item in facts' }),
  memory: Type.Optional(StoredFact),
  error: Type.Optional(Type.Object({
    error: Type.String(),
    code: Type.String(),
    field: Type.String({ description: 'The field at fault, e.g. facts[3].valid_from' }),
  })),
});
export const RememberBatchResponse = Type.Object({
  results: Type.Array(BatchItemResult, { description: 'One per item, in order: memory when stored, error when refused' }),
  stored: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
});
export const StatusResponse = Type.Object({ status: Type.Literal('ok') });
export const EndEpisodeResponse = Type.Object({
  memories_created: Type.Integer({ minimum: 0 }),
  extraction_tier: Type.Union([Type.Literal(1), Type.Literal(2)], {
    description: 'Which extractor produced the memories: 1 the offline rules (no LLM endpoint answered), 2 the LLM endpoint',
  }),
});

export const MEMORY_EVENTS = ['stored', 'reinforced', 'promoted_from', 'decayed', 'archived', 'superseded', 'restored'] as const;
export const MemoryHistoryResponse = Type.Object({
  memory: Memory,
  chain: Type.Array(Memory, { description: 'Its values of the same attribute over time, oldest first, itself included (semantic facts; else itself)' }),
  events: Type.Array(Type.Object({
    event: Type.Enum([...MEMORY_EVENTS]),
    at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When; null when not recorded' }),
    memory_id: Type.Optional(Type.String({ description: 'promoted_from: the episodic memory; superseded: the fact that replaced it' })),
    count: Type.Optional(Type.Integer({ description: 'reinforced: how many recalls returned it (at: the last)' })),
  }), { description: 'Its life, in time order' }),
});

export const DeletionSnapshot = Type.Object({
  snapshot_id: Type.String({ format: 'uuid' }),
  format_version: Type.Integer(),
  captured_at: Type.String({ format: 'date-time' }),
  owner_only: Type.Boolean(),
  memory_count: Type.Integer(),
  episodic_count: Type.Integer(),
  semantic_count: Type.Integer(),
});

export const ForgetResponse = Type.Object({
  forgotten_count: Type.Integer({ minimum: 0 }),
  snapshot: Type.Optional(DeletionSnapshot),
});

/**
 * An episodic memory in inspect also says which episode it belongs to and where: inspect is
 * newest-first across episodes, and a reader (the console) regroups turns into conversations.
 */
export const InspectedEpisodicMemory = Type.Object({
  ...Memory.properties,
  episode_id: Type.Optional(Type.String({ description: 'Episode (session) this turn belongs to' })),
  seq: Type.Optional(Type.Integer({ description: 'Position of the turn in its episode (0-based)' })),
});

/** A semantic or procedural memory in inspect also says what wrote it (the console shows it on each card). */
export const InspectedFact = Type.Object({
  ...Memory.properties,
  extraction_tier: Type.Integer({ description: '1: the offline extraction rules, or a fact stored directly (remember); 2: the LLM extractor' }),
});

export const InspectResponse = Type.Object({
  entity: Type.String(),
  episodic: Type.Array(InspectedEpisodicMemory),
  semantic: Type.Array(InspectedFact),
  procedural: Type.Array(InspectedFact),
  contradictions: Type.Optional(Type.Array(Contradiction, { description: 'Pairs of the facts listed that conflict, as recall reports them (both memory_ids listed)' })),
});

export const StatsResponse = Type.Object({
  namespace: Type.String(),
  entities: Type.Integer(),
  episodic_memories: Type.Integer(),
  semantic_memories: Type.Integer(),
  procedural_memories: Type.Integer(),
});

export const NamespacesResponse = Type.Object({
  namespaces: Type.Array(StatsResponse),
  total: Type.Integer({ minimum: 0, description: 'Every namespace, listed or not' }),
});

export const ConsolidateResponse = Type.Object({
  promoted: Type.Integer(),
  decayed: Type.Integer(),
  archived: Type.Integer(),
});

export const EntitySummary = Type.Object({
  name: Type.String(),
  kind: Type.Enum([...ENTITY_KINDS]),
  created_at: Type.String({ format: 'date-time' }),
  /** Active memories the entity owns or took part in (what inspect and DELETE cover, archived left out). */
  memory_count: Type.Integer({ minimum: 0 }),
});
export const ListEntitiesResponse = Type.Object({ entities: Type.Array(EntitySummary), total: Type.Integer({ minimum: 0 }) });

export const EpisodeSummary = Type.Object({
  episode_id: Type.String(),
  participants: Type.Array(Type.String(), { description: 'Names of the entities taking part, in the order given at start' }),
  started_at: Type.String({ format: 'date-time', description: "When the conversation took place (started_at, or when it was started)" }),
  ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it was ended; null while open (or expired without an end)' }),
  outcome: Type.Union([Type.Enum([...OUTCOMES]), Type.Null()]),
  message_count: Type.Integer({ minimum: 0, description: 'Its messages still stored (a forgotten participant takes its turns along)' }),
});
export const ListEpisodesResponse = Type.Object({ episodes: Type.Array(EpisodeSummary), total: Type.Integer({ minimum: 0 }) });

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const SnapshotSummaryRecord = Type.Object({
  snapshot_id: Type.String(),
  captured_at: Nullable(Type.String({ format: 'date-time' })),
  namespace: Nullable(Type.String()),
  entity: Nullable(Type.String()),
  memory_count: Type.Integer({ minimum: 0 }),
  counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'episodic, semantic, procedural (empty for a damaged file)' }),
  vectors: Type.Integer({ minimum: 0 }),
  problem: Nullable(Type.String({ description: 'Why the file cannot be restored (damaged)' })),
});
export const ListSnapshotsResponse = Type.Object({ snapshots: Type.Array(SnapshotSummaryRecord) });
export const RestoreResponse = Type.Object({
  snapshot_id: Type.String({ format: 'uuid' }),
  namespace: Type.String(),
  entity: Type.String(),
  restored_count: Type.Integer({ minimum: 0 }),
  already_present_count: Type.Integer({ minimum: 0 }),
});

export const HealthResponse = Type.Object({
  status: Type.String({ description: "'ok'; 'degraded' while no PostgreSQL primary answers (writes answer 503 DATABASE_UNAVAILABLE, recall serves from replicas)" }),
  version: Type.String(),
});
export const ErrorResponse = Type.Object({ error: Type.String(), code: Type.Optional(Type.String()) });

// Operator endpoints (GET /metrics, GET /v1/openapi.json).
export const MetricsText = Type.String({ description: 'Prometheus text exposition format 0.0.4' });
export const OpenApiDocument = Type.Object({
  openapi: Type.String(),
  info: Type.Object({ title: Type.String(), version: Type.String() }),
  paths: Type.Record(Type.String(), Type.Object({})),
}, { description: 'This OpenAPI 3.1 document' });

// ------------------------------------------------------------ static types

// Validated inputs, as handlers and pool tasks receive them: every defaulted field is filled in.
// Named Validated… so that the client's blanket re-export cannot pass them off as what a caller
// sends (the client's RecallInput etc. are the caller-side forms).
export type ValidatedRecall = Parsed<typeof RecallBody>;
export type ValidatedRecallGrouped = Parsed<typeof RecallGroupedBody>;
export type ValidatedInspect = Parsed<typeof InspectBody>;
export type ValidatedListEntities = Parsed<typeof ListEntitiesQuery>;
export type ValidatedListNamespaces = Parsed<typeof ListNamespacesQuery>;
export type NamespacesResult = Static<typeof NamespacesResponse>;
export type ValidatedListEpisodes = Parsed<typeof ListEpisodesQuery>;

export type EntityRecord = Static<typeof Entity>;
export type MemoryRecord = Static<typeof Memory>;
export type Explanation = Static<typeof Explanation>;
export type StoredFactRecord = Static<typeof StoredFact>;
export type ContradictionRecord = Static<typeof Contradiction>;
export type RecallResult = Static<typeof RecallResponse>;
export type GroupRecord = Static<typeof Group>;
export type RecallGroupedResult = Static<typeof RecallGroupedResponse>;
export type StartEpisodeResult = Static<typeof StartEpisodeResponse>;
export type EndEpisodeResult = Static<typeof EndEpisodeResponse>;
export type ImportEpisodeResult = Static<typeof ImportEpisodeResponse>;
export type MemoryHistoryResult = Static<typeof MemoryHistoryResponse>;
export type RememberBatchResult = Static<typeof RememberBatchResponse>;
export type DeletionSnapshotRecord = Static<typeof DeletionSnapshot>;
export type ForgetResult = Static<typeof ForgetResponse>;
export type InspectResult = Static<typeof InspectResponse>;
export type StatsResult = Static<typeof StatsResponse>;
export type ConsolidateResult = Static<typeof ConsolidateResponse>;
export type HealthResult = Static<typeof HealthResponse>;
export type ListEntitiesResult = Static<typeof ListEntitiesResponse>;
export type ListEpisodesResult = Static<typeof ListEpisodesResponse>;
export type EpisodeSummaryRecord = Static<typeof EpisodeSummary>;
export type ListSnapshotsResult = Static<typeof ListSnapshotsResponse>;
export type RestoreResult = Static<typeof RestoreResponse>;
