// The service's operations, independent of transport. REST routes and MCP tools both call
// these with already-validated input, so the two surfaces cannot drift apart.
import type { Config } from '../shared/config.js';
import type {
  ConsolidateResult, CreateEntityInput, EndEpisodeInput, EndEpisodeResult, EntityRecord, EpisodeMessageInput,
  ForgetResult, InspectInput, InspectResult, RecallGroupedInput, RecallGroupedResult, RecallInput, RecallResult,
  RememberInput, StartEpisodeInput, StartEpisodeResult, StatsResult, StoredFactRecord,
} from '../shared/schemas.js';
import type { WriterClient } from '../core/writer-client.js';
import type { ReadPool } from '../core/pool/read-pool.js';
import { ServiceError } from '../shared/errors.js';
import { markTruncated } from './truncation.js';
import { JsonAnswer } from './json-answer.js';
import type { EmbeddingBackfill } from '../core/jobs/embedding-backfill.js';
import type { Reinforcer } from '../core/reinforcement.js';
import type { Consolidator } from '../core/jobs/consolidator.js';
import { EntityDeletion } from '../core/entity-deletion.js';
import type { Logger } from '../shared/logger.js';
import type { QueryEmbeddingCache } from '../core/query-embedding-cache.js';

export class MemoryOperations {
  private readonly deletion: EntityDeletion;

  constructor(
    private readonly config: Config,
    private readonly writer: WriterClient,
    private readonly pool: ReadPool,
    private readonly backfill: EmbeddingBackfill,
    private readonly reinforcer: Reinforcer,
    private readonly consolidator: Consolidator,
    log: Logger,
    private readonly queryCache: QueryEmbeddingCache,
  ) {
    this.deletion = new EntityDeletion(pool, writer, log);
  }

  /** Told which extractor served each `end`, and why the LLM was not used (metrics, logs). */
  onExtraction: ((extractor: 'llm' | 'rules' | 'none', fallbackReason?: string) => void) | null = null;

  /** New memory rows need vectors; the backfill embeds them off the request path. */
  private async stored<T>(write: Promise<T>): Promise<T> {
    const result = await write;
    this.backfill.poke();
    return result;
  }

  /** Health fails (503) once the writer thread has died: the service cannot store anything. */
  assertHealthy(): void {
    const failed = this.writer.failed;
    if (failed) throw failed;
  }

  createEntity(input: CreateEntityInput): Promise<EntityRecord> {
    return this.writer.send({ type: 'ensureEntity', name: input.name, kind: input.kind ?? 'user' });
  }

  remember(input: RememberInput): Promise<StoredFactRecord> {
    return this.stored(this.writer.send({ type: 'remember', entity: input.entity, fact: input.fact, confidence: input.confidence ?? 0.8 }));
  }

  async recall(input: RecallInput): Promise<JsonAnswer<RecallResult>> {
    const queryVector = this.queryCache.get(input.query);
    const { answer, rowids, truncated, embedded } = await this.pool.run({ op: 'recall', input, queryVector });
    if (embedded) this.queryCache.set(input.query, embedded);
    this.reinforcer.record(rowids);
    return markTruncated(new JsonAnswer(answer), truncated);
  }

  async recallGrouped(input: RecallGroupedInput): Promise<JsonAnswer<RecallGroupedResult>> {
    try {
      const queryVector = this.queryCache.get(input.query);
      const { answer, rowids, truncated, embedded } = await this.pool.run({ op: 'recallGrouped', input, queryVector });
      if (embedded) this.queryCache.set(input.query, embedded);
      this.reinforcer.record(rowids);
      return markTruncated(new JsonAnswer(answer), truncated);
    } catch (error) {
      // The spec names this failure: the recall pipeline failed → 500 with {error}.
      const failure = ServiceError.from(error);
      throw failure.status >= 500 ? new ServiceError('RECALL_FAILED', `recall pipeline failed: ${failure.message}`) : failure;
    }
  }

  startEpisode(input: StartEpisodeInput): Promise<StartEpisodeResult> {
    return this.writer.send({ type: 'startEpisode', participants: input.participants });
  }

  addMessage(episodeId: string, input: EpisodeMessageInput): Promise<{ status: 'ok' }> {
    return this.stored(this.writer.send({ type: 'addMessage', episodeId, role: input.role, content: input.content }));
  }

  /** Extraction runs in the pool (it may call an LLM); its results are stored by the writer. */
  async endEpisode(episodeId: string, input: EndEpisodeInput): Promise<EndEpisodeResult> {
    const outcome = input.outcome ?? null;
    const { memories, extractor, fallbackReason, sourceIds } = await this.pool.run({ op: 'prepareEpisodeEnd', episodeId, outcome });
    this.onExtraction?.(extractor, fallbackReason);
    return this.stored(this.writer.send({ type: 'endEpisode', episodeId, outcome, memories, sourceIds }));
  }

  /** Snapshot in the pool, then delete in time-bounded chunks (workers/entity-deletion.ts). */
  forget(entity: string): Promise<ForgetResult> {
    return this.deletion.forget(entity);
  }

  async inspect(input: InspectInput): Promise<JsonAnswer<InspectResult>> {
    const { answer, truncated } = await this.pool.run({ op: 'inspect', input });
    return markTruncated(new JsonAnswer(answer), truncated);
  }

  stats(): Promise<StatsResult> {
    return this.pool.run({ op: 'stats' });
  }

  /** Promotion, decay and archiving: planned in the pool, written by the writer, one run at a time. */
  consolidate(): Promise<ConsolidateResult> {
    return this.consolidator.run();
  }
}
