// Piscina worker: one read-only connection and one set of prepared statements per thread,
// opened when the thread starts and reused by every task it runs.
import { workerData } from 'node:worker_threads';
import { openDatabase } from '../shared/db.js';
import { ServiceError, toWireError } from '../shared/errors.js';
import type { PoolResults, PoolTask, PoolWorkerData, StageTimings, TaskResult } from '../shared/messages.js';
import type { EntityRecord, InspectResult, MemoryType } from '../shared/schemas.js';
import { ReadStore } from './read-store.js';
import { RecallEngine, toMemory } from './recall/engine.js';
import { groupHits } from './recall/grouping.js';
import { extractByRules } from './extraction/rules.js';

const { config, namespaceId } = workerData as PoolWorkerData;
const db = openDatabase(config.dbPath, { readonly: true });
const store = new ReadStore(db, namespaceId, config.namespace);
const engine = new RecallEngine(db, store);

function inspect(entityName: string, limit: number): InspectResult {
  const entity = store.entity(entityName);
  if (!entity) throw new ServiceError('NOT_FOUND', `entity '${entityName}' not found`);
  const result: InspectResult = { entity: entity.name, episodic: [], semantic: [], procedural: [] };
  for (const row of store.entityMemories(entity.id, limit)) result[row.memory_type].push(toMemory(row, null));
  return result;
}

/** Who extracted facts are about: the first human participant, else the first participant. */
function subjectOf(participants: EntityRecord[]): EntityRecord | undefined {
  return participants.find((p) => p.kind === 'user') ?? participants[0];
}

async function run(task: PoolTask, timings: StageTimings): Promise<PoolResults[PoolTask['op']]> {
  switch (task.op) {
    case 'recall': {
      const { query, entity = null, types = null, limit = 5 } = task.input;
      const hits = engine.recall({ query, entity, types: types as MemoryType[] | null, limit }, Date.now(), timings);
      return { memories: hits.map((hit) => toMemory(hit.row, hit.score)), contradictions: [] };
    }
    case 'recallGrouped': {
      const { query, limit = 50, order = 'chronological', max_groups = null } = task.input;
      const hits = engine.recall({ query, entity: null, types: null, limit }, Date.now(), timings);
      const episodeIds = [...new Set(hits.flatMap((hit) => (hit.row.episode_id ? [hit.row.episode_id] : [])))];
      return { groups: groupHits(hits, store.episodeStarts(episodeIds), order, max_groups) };
    }
    case 'inspect':
      return inspect(task.input.entity, task.input.limit ?? 50);
    case 'stats':
      return store.stats();
    case 'prepareEpisodeEnd': {
      const episode = store.episode(task.episodeId);
      if (!episode) throw new ServiceError('NOT_FOUND', `episode '${task.episodeId}' not found`);
      if (episode.ended_at !== null) throw new ServiceError('NOT_FOUND', `episode '${task.episodeId}' has already ended`);
      const subject = subjectOf(store.participants(task.episodeId));
      if (!subject) return { memories: [] };
      return { memories: extractByRules(store.transcript(task.episodeId), subject.name, task.outcome) };
    }
  }
}

export default async function handle(task: PoolTask): Promise<TaskResult<unknown>> {
  try {
    const timings: StageTimings = {};
    const value = await run(task, timings);
    return Object.keys(timings).length > 0 ? { ok: true, value, timings } : { ok: true, value };
  } catch (error) {
    return { ok: false, error: toWireError(error) };
  }
}
