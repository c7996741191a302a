// Memories: storing a fact, recalling (flat or grouped by conversation), consolidating, one
// memory's history and its retraction.
import {
  ConsolidateResponse, EmptyBody, ForgetResponse, MAX_LIMIT, RecallBody, RecallGroupedBody, RecallGroupedResponse, RecallResponse,
  MAX_BATCH_FACTS, MemoryHistoryResponse, MemoryParams, RememberBatchBody, RememberBatchResponse, RememberBody, StoredFact,
} from '../schemas.js';
import { defaultOf } from '../defaults.js';
import { declareOperation, READS, WRITES } from './declare.js';

export const remember = declareOperation({
  name: 'remember',
  input: RememberBody,
  output: StoredFact,
  position: 'returned',
  errors: ['STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{ method: 'post', path: '/v1/remember', status: 201, summary: 'Store a semantic memory (fact) about an entity' }],
  mcp: {
    name: 'remember',
    title: 'Remember a fact',
    description:
      'Store one durable fact (a semantic memory) about a named entity, e.g. entity "alice", fact "Alice is allergic to peanuts". ' +
      'Use it for stable knowledge worth recalling in later conversations: preferences, attributes, relationships, decisions. ' +
      `The entity is created (kind "user") if it does not exist yet. confidence (0–1, default ${defaultOf(RememberBody, 'confidence')}) ` +
      'says how sure you are. Storing the same fact again does not duplicate it; the higher confidence is kept. ' +
      'Returns the stored record: id, content, memory_type ("semantic"), confidence, stability, extraction_tier.',
    annotations: { ...WRITES, idempotentHint: true },
  },
});

export const rememberBatch = declareOperation({
  name: 'rememberBatch',
  input: RememberBatchBody,
  output: RememberBatchResponse,
  position: 'returned',
  errors: ['STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{ method: 'post', path: '/v1/remember/batch', summary: `Store up to ${MAX_BATCH_FACTS} facts in one call; each is stored or reported on its own` }],
  mcp: {
    name: 'remember_batch',
    title: 'Remember many facts',
    description:
      `Store up to ${MAX_BATCH_FACTS} facts in one call: facts [{entity, fact, confidence?, valid_from?}], each as remember takes it. ` +
      'Returns {results, stored, failed}: one result per fact in order, with the stored memory, or an error naming the field ' +
      '(e.g. facts[3].valid_from) for a fact that was refused; the others are stored all the same.',
    annotations: { ...WRITES, idempotentHint: true },
  },
});

export const recall = declareOperation({
  name: 'recall',
  input: RecallBody,
  output: RecallResponse,
  position: 'accepted',
  errors: [],
  rest: [{ method: 'post', path: '/v1/recall', summary: 'Search memories (fused signals), with contradictions among the returned facts' }],
  mcp: {
    name: 'recall',
    title: 'Recall memories',
    description:
      'Search stored memories with a natural-language query and get the most relevant ones first ' +
      '(hybrid search: meaning, keywords, entity links and recency). Call it before answering questions that may depend on ' +
      `what was learned earlier. Optional: entity (only that entity's memories), limit (default ${defaultOf(RecallBody, 'limit')}, ` +
      `max ${MAX_LIMIT}), types (any of "episodic", "semantic", "procedural"). Returns {memories: [{id, content, memory_type, ` +
      'confidence, stability, score}], contradictions: [{description}]}; contradictions lists conflicting semantic facts ' +
      'among the results (e.g. two different home cities), so you can ask which one is current. No paging: raise limit for more. ' +
      'explain: true adds to each memory an explanation: which signals (lexical, vector, feedback, adjacent turn, session, entity, tie_break, time) ' +
      'ranked it and how much each added to its score — for debugging why a memory came back, not needed to answer.',
    annotations: READS,
  },
});

export const recallGrouped = declareOperation({
  name: 'recallGrouped',
  input: RecallGroupedBody,
  output: RecallGroupedResponse,
  position: 'accepted',
  errors: ['RECALL_FAILED'],
  rest: [{ method: 'post', path: '/v1/recall_grouped', summary: 'Search memories, grouped by the episode (session) they came from' }],
  mcp: {
    name: 'recall_grouped',
    title: 'Recall memories grouped by conversation',
    description:
      'Like recall, but groups the matching memories by the conversation (episode) they came from, so you can read ' +
      `each match in its context. order "chronological" (default) gives the oldest conversation first with messages in ` +
      `conversation order; "relevance" gives the best-matching group first. Optional entity: only that entity's memories. limit (default ${defaultOf(RecallGroupedBody, 'limit')}) ` +
      'caps the memories considered across all groups; max_groups optionally caps the number of groups. Facts not tied ' +
      'to a conversation come back as single-memory groups with session_id null. Returns {groups: [{session_id, ' +
      'session_time, group_score, memories}]}. explain: true adds each memory\'s explanation, as in recall.',
    annotations: READS,
  },
});

export const consolidate = declareOperation({
  name: 'consolidate',
  input: EmptyBody,
  output: ConsolidateResponse,
  position: 'returned',
  errors: ['STORAGE_FULL', 'DATABASE_UNAVAILABLE', 'CONSOLIDATION_BUSY'],
  rest: [{ method: 'post', path: '/v1/consolidate', body: null, summary: 'Promote repeated episodes, apply decay, archive weak memories' }],
  mcp: {
    name: 'consolidate',
    title: 'Consolidate memories',
    description:
      'Run memory maintenance: promote repeated episodic memories to semantic facts, apply forgetting-curve decay, ' +
      'and archive memories that have faded below the threshold. Takes no arguments. Returns {promoted, decayed, ' +
      'archived}. Normally scheduled by operators; call it only when asked to.',
    annotations: { ...WRITES, destructiveHint: true },
  },
});

export const memoryHistory = declareOperation({
  name: 'memoryHistory',
  input: MemoryParams,
  output: MemoryHistoryResponse,
  errors: ['NOT_FOUND'],
  rest: [{
    method: 'get', path: '/v1/memories/:memory_id/history', body: null, params: { memory_id: 'memory_id' },
    summary: 'A memory with its supersession chain in time order and its life events',
  }],
  mcp: {
    name: 'memory_history',
    title: 'History of a memory',
    description:
      'How one memory came to be and what replaced it: memory_id (from a recall or inspect answer). Returns {memory, chain, events}: ' +
      'chain lists the values the same attribute had over time, oldest first (e.g. each city someone lived in, with valid_until and ' +
      'superseded_by), events its life (stored, reinforced, promoted_from, decayed, archived, superseded, restored) with times.',
    annotations: READS,
  },
});

export const forgetMemory = declareOperation({
  name: 'forgetMemory',
  input: MemoryParams,
  output: ForgetResponse,
  position: 'returned',
  errors: ['NOT_FOUND', 'RESTORE_BUSY', 'SNAPSHOT_FAILED', 'STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{
    method: 'delete', path: '/v1/memories/:memory_id', body: null, params: { memory_id: 'memory_id' },
    summary: 'Retract one memory after writing a recovery snapshot (restore brings it back)',
  }],
  mcp: {
    name: 'forget_memory',
    title: 'Retract one memory',
    description:
      'Delete ONE memory by memory_id (from a recall or inspect answer), e.g. a fact the user says is wrong; the entity and ' +
      'its other memories stay. A recovery snapshot is written first (for operators); if it cannot be written nothing is ' +
      'deleted. A fact it had superseded is current again. Returns {forgotten_count, snapshot}; an unknown id fails with "not found".',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
});
