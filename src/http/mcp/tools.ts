// The MCP tool catalogue. Each tool takes the SAME TypeBox schema its REST route validates
// with (so the two surfaces cannot drift), validates through the same compileValidator (so a
// bad argument gets the same message as a bad REST body), calls the same MemoryOperations
// method, and answers with the same JSON the REST route returns. Descriptions are written for
// the model that decides when to call the tool.
import type { TSchema } from 'typebox';
import {
  ConsolidateResponse, CreateEntityBody, EmptyBody, EndEpisodeByBody, EndEpisodeResponse, Entity, EpisodeMessageByBody,
  ForgetParams, ForgetResponse, InspectBody, InspectResponse, RecallBody, RecallGroupedBody, RecallGroupedResponse,
  RecallResponse, RememberBody, StartEpisodeBody, StartEpisodeResponse, StatsResponse, StatusResponse, StoredFact,
} from '../../shared/schemas.js';
import { compileValidator, type Validator } from '../../shared/validation.js';
import type { MemoryOperations } from '../operations.js';

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface MemoryTool {
  name: string;
  title: string;
  description: string;
  input: Validator<TSchema>;
  output: TSchema;
  annotations: ToolAnnotations;
  run(ops: MemoryOperations, args: any): Promise<unknown>;
}

// A memory store is a closed world: no tool reaches anything outside this service.
const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

// Validators are compiled once, here, not per request (fresh MCP servers are built per request).
const v = (schema: TSchema) => compileValidator(schema, 'arguments');

export const MEMORY_TOOLS: readonly MemoryTool[] = Object.freeze([
  {
    name: 'remember',
    title: 'Remember a fact',
    description:
      'Store one durable fact (a semantic memory) about a named entity, e.g. entity "alice", fact "Alice is allergic to peanuts". ' +
      'Use it for stable knowledge worth recalling in later conversations: preferences, attributes, relationships, decisions. ' +
      'The entity is created (kind "user") if it does not exist yet. confidence (0–1, default 0.8) says how sure you are. ' +
      'Storing the same fact again does not duplicate it; the higher confidence is kept. ' +
      'Returns the stored record: id, content, memory_type ("semantic"), confidence, stability, extraction_tier.',
    input: v(RememberBody),
    output: StoredFact,
    annotations: { ...WRITES, idempotentHint: true },
    run: (ops, args) => ops.remember(args),
  },
  {
    name: 'recall',
    title: 'Recall memories',
    description:
      'Search stored memories with a natural-language query and get the most relevant ones first ' +
      '(hybrid search: meaning, keywords, entity links and recency). Call it before answering questions that may depend on ' +
      'what was learned earlier. Optional: entity (only that entity\'s memories), limit (default 5, max 1000), ' +
      'types (any of "episodic", "semantic", "procedural"). Returns {memories: [{id, content, memory_type, confidence, ' +
      'stability, score}], contradictions: [{description}]}; contradictions lists conflicting semantic facts among the ' +
      'results (e.g. two different home cities), so you can ask which one is current. No paging: raise limit for more.',
    input: v(RecallBody),
    output: RecallResponse,
    annotations: READS,
    run: (ops, args) => ops.recall(args),
  },
  {
    name: 'recall_grouped',
    title: 'Recall memories grouped by conversation',
    description:
      'Like recall, but groups the matching memories by the conversation (episode) they came from, so you can read ' +
      'each match in its context. order "chronological" (default) gives the oldest conversation first with messages in ' +
      'conversation order; "relevance" gives the best-matching group first. limit (default 50) caps the memories ' +
      'considered across all groups; max_groups optionally caps the number of groups. Facts not tied to a conversation ' +
      'come back as single-memory groups with session_id null. Returns {groups: [{session_id, session_time, ' +
      'group_score, memories}]}.',
    input: v(RecallGroupedBody),
    output: RecallGroupedResponse,
    annotations: READS,
    run: (ops, args) => ops.recallGrouped(args),
  },
  {
    name: 'episode_start',
    title: 'Start an episode',
    description:
      'Begin recording a conversation or task (an episode) between named participants, e.g. ["alice", "support-bot"]. ' +
      'Participants are created as entities if needed. Returns {episode_id}; pass it to episode_message for each ' +
      'message and to episode_end when the conversation is over. An episode expires after a period without messages (30 minutes by default).',
    input: v(StartEpisodeBody),
    output: StartEpisodeResponse,
    annotations: WRITES,
    run: (ops, args) => ops.startEpisode(args),
  },
  {
    name: 'episode_message',
    title: 'Add a message to an episode',
    description:
      'Append one message to an active episode: episode_id (from episode_start), role (who spoke, e.g. "user" or ' +
      '"assistant") and content (the message text). Each message is stored at once as an episodic memory and can be ' +
      'recalled immediately. Returns {status: "ok"}. Fails with "not found" when the episode is unknown, already ' +
      'ended or expired: start a new episode then.',
    input: v(EpisodeMessageByBody),
    output: StatusResponse,
    annotations: WRITES,
    run: (ops, args) => ops.addMessage(args.episode_id, args),
  },
  {
    name: 'episode_end',
    title: 'End an episode',
    description:
      'Close an episode and extract lasting memories (facts and procedures) from its messages. Optional outcome: ' +
      '"success", "failure" or "partial". Returns {memories_created}: how many semantic/procedural memories the ' +
      'extraction stored. Fails with "not found" when the episode is unknown or was already ended.',
    input: v(EndEpisodeByBody),
    output: EndEpisodeResponse,
    annotations: WRITES,
    run: (ops, args) => ops.endEpisode(args.episode_id, args),
  },
  {
    name: 'forget',
    title: 'Forget an entity',
    description:
      'Delete ALL active memories of one entity (as owner or episode participant). Use only when the user asks for ' +
      'their data to be forgotten or the memories are clearly wrong; it cannot be undone from here. A recovery ' +
      'snapshot is written first (for operators); if it cannot be written nothing is deleted. Returns ' +
      '{forgotten_count, snapshot?}; snapshot is omitted when there was nothing to delete.',
    input: v(ForgetParams),
    output: ForgetResponse,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (ops, args) => ops.forget(args.entity_name),
  },
  {
    name: 'inspect',
    title: 'Inspect an entity',
    description:
      'List the most recent active memories of one entity, newest first, split by type: returns {entity, episodic, ' +
      'semantic, procedural}. limit (default 50, max 1000) caps the total. Use it to review everything known about ' +
      'someone rather than to answer a specific question (use recall for that). Fails with "not found" for an ' +
      'unknown entity.',
    input: v(InspectBody),
    output: InspectResponse,
    annotations: READS,
    run: (ops, args) => ops.inspect(args),
  },
  {
    name: 'stats',
    title: 'Memory statistics',
    description:
      'Count what the memory store holds in this namespace. Takes no arguments. Returns {namespace, entities, ' +
      'episodic_memories, semantic_memories, procedural_memories}.',
    input: v(EmptyBody),
    output: StatsResponse,
    annotations: READS,
    run: (ops) => ops.stats(),
  },
  {
    name: 'consolidate',
    title: 'Consolidate memories',
    description:
      'Run memory maintenance: promote repeated episodic memories to semantic facts, apply forgetting-curve decay, ' +
      'and archive memories that have faded below the threshold. Takes no arguments. Returns {promoted, decayed, ' +
      'archived}. Normally scheduled by operators; call it only when asked to.',
    input: v(EmptyBody),
    output: ConsolidateResponse,
    annotations: { ...WRITES, destructiveHint: true },
    run: (ops) => ops.consolidate(),
  },
  {
    name: 'create_entity',
    title: 'Create an entity',
    description:
      'Create a named entity, or return it if it already exists. kind is one of "user" (default), "agent", "team", ' +
      '"tool". Not required before remember or episode_start (they create entities on first use); use it to give an ' +
      'entity a kind other than "user". Returns {id, name, kind}.',
    input: v(CreateEntityBody),
    output: Entity,
    annotations: { ...WRITES, idempotentHint: true },
    run: (ops, args) => ops.createEntity(args),
  },
]);

export const TOOLS_BY_NAME: ReadonlyMap<string, MemoryTool> = new Map(MEMORY_TOOLS.map((tool) => [tool.name, tool]));
