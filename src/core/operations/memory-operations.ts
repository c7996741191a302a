// The use cases: one handler per declared operation (shared/operations/), independent of
// transport. Each answers an Answer (contract.ts) that says, beside its JSON, what the surfaces
// tell the caller next to it: a cut to the response budget, a write's commit position.
import type { Config } from '../../shared/config.js';
import type { Input, Output } from '../../shared/operations/index.js';
import type { WriterClient } from '../writer-client.js';
import type { ReadPool } from '../pool/read-pool.js';
import { fail, ServiceError } from '../../shared/errors.js';
import type { EmbeddingBackfill } from '../jobs/embedding-backfill.js';
import type { Reinforcer } from '../reinforcement.js';
import type { Consolidator } from '../jobs/consolidator.js';
import { EntityDeletion } from '../entity-deletion.js';
import { MemoryRetraction } from '../memory-retraction.js';
import { SnapshotRestore } from '../snapshot-restore.js';
import { DeleteRestoreTurns } from '../take-turns.js';
import { LOCAL_CLUSTER_TURNS, type ClusterTurns } from '../cluster-turns.js';
import type { Logger } from '../../shared/logger.js';
import type { QueryEmbeddingCache } from '../query-embedding-cache.js';
import type { QueryEmbeddingBatcher } from '../query-embedding-batcher.js';
import { CommitTrail } from '../commit-trail.js';
import { furthestWalPosition, READ_PRIMARY } from '../../shared/wal-position.js';
import { optionalTime, recallTime } from '../../shared/event-time.js';
import type { CommandOf } from '../../shared/protocol/writer.js';
import { RememberBody } from '../../shared/schemas.js';
import { compileValidator } from '../../shared/validation.js';
import type { Parsed } from '../../shared/defaults.js';

/** remember/batch checks each item as remember's body. */
const BATCH_ITEM = compileValidator(RememberBody, 'item');

/**
 * A refused batch item's error, its field named from the batch (facts[3].valid_from): the item
 * was checked on its own, so the field its refusal names (FieldFault) is a path inside the item.
 */
function batchItemError(index: number, error: ServiceError): { error: string; code: string; field: string } {
  const item = `facts[${index}]`;
  const fault = error.fault;
  if (!fault) return { error: `${item}: ${error.message}`, code: error.code, field: item };
  const field = fault.path === '' ? item : fault.path.startsWith('[') ? `${item}${fault.path}` : `${item}.${fault.path}`;
  return { error: `${field}: ${fault.reason}`, code: error.code, field };
}
import { answerOf, serialisedAnswer, type SerialisedAnswer, type ValueAnswer, type OperationHandlers, type RequestContext } from './contract.js';

export class MemoryOperations implements OperationHandlers {
  private readonly deletion: EntityDeletion;
  private readonly restoration: SnapshotRestore;
  private readonly retraction: MemoryRetraction;

  constructor(
    private readonly config: Config,
    private readonly writer: WriterClient,
    private readonly pool: ReadPool,
    private readonly backfill: EmbeddingBackfill,
    private readonly reinforcer: Reinforcer,
    private readonly consolidator: Consolidator,
    private readonly log: Logger,
    private readonly queryCache: QueryEmbeddingCache,
    private readonly version: string,
    clusterTurns: ClusterTurns = LOCAL_CLUSTER_TURNS,
  ) {
    // Deletes and restores take turns: both work in many writer commands (and, over PostgreSQL,
    // with the other nodes' too).
    const turns = new DeleteRestoreTurns(clusterTurns);
    this.deletion = new EntityDeletion(pool, writer, log, turns);
    this.retraction = new MemoryRetraction(pool, writer, log, turns);
    this.restoration = new SnapshotRestore(config, pool, writer, backfill, log, turns);
  }

  /** Embeds the queries of concurrent recalls together (local models); null: each recall's thread embeds its own. */
  queryBatcher: QueryEmbeddingBatcher | null = null;

  /**
   * The query's vector from the cache or a batched model call (with the wait, the recall's embed
   * stage); no vector: the recall's thread embeds the query itself.
   */
  private async queryVectorOf(namespace: string, query: string): Promise<{ queryVector?: Float32Array; embedMs?: number }> {
    const cached = this.queryCache.get(namespace, query);
    if (cached || !this.queryBatcher) return { queryVector: cached };
    const started = performance.now();
    const vector = await this.queryBatcher.embed(query);
    if (!vector) return {};
    this.queryCache.set(namespace, query, vector);
    return { queryVector: vector, embedMs: performance.now() - started };
  }

  /** Told which extractor served each `end`, and why the LLM was not used (metrics, logs). */
  onExtraction: ((extractor: 'llm' | 'rules' | 'none', fallbackReason?: string) => void) | null = null;

  /**
   * A write's answer, with the position of the commit of its last writer command (the trail
   * `write` hands to each), so a recall given it, on any node, sees the write.
   */
  private async written<T>(write: (trail: CommitTrail) => Promise<T>): Promise<ValueAnswer<T>> {
    const trail = new CommitTrail();
    const value = await write(trail);
    return answerOf(value, trail.position);
  }

  /** New memory rows need vectors; the backfill embeds them off the request path. */
  private async stored<T>(namespace: string, write: Promise<T>): Promise<T> {
    const result = await write;
    this.backfill.poke(namespace);
    return result;
  }

  /**
   * What a recall must see: this node's writes and the caller's position, whichever is further;
   * the primary's present when one of this node's commits has no known position.
   */
  private readAfter(request: RequestContext): string | undefined {
    const own = this.writer.position.readAfter;
    return own === READ_PRIMARY ? own : furthestWalPosition(own, request.position);
  }

  /**
   * Synchronous, so it is answered before uWS returns. Fails (503) once the writer thread has
   * died: the service cannot store anything. 'degraded' while the PostgreSQL primary is missing
   * (a failover): the process is up, recall serves, writes answer DATABASE_UNAVAILABLE.
   */
  health(): ValueAnswer<Output<'health'>> {
    const failed = this.writer.failed;
    if (failed) throw failed;
    return { value: { status: this.writer.databaseUnavailable ? 'degraded' : 'ok', version: this.version } };
  }

  createEntity(input: Input<'createEntity'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'createEntity'>>> {
    return this.written((trail) => this.writer.send(namespace, { type: 'ensureEntity', name: input.name, kind: input.kind }, trail));
  }

  remember(input: Input<'remember'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'remember'>>> {
    return this.written((trail) =>
      this.stored(namespace, this.writer.send(namespace, {
        type: 'remember', entity: input.entity, fact: input.fact, confidence: input.confidence, validFrom: optionalTime('valid_from', input.valid_from),
      }, trail)));
  }

  /** Each fact checked on its own: the valid ones are stored in one writer command, the others reported by index and field. */
  async rememberBatch(input: Input<'rememberBatch'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'rememberBatch'>>> {
    const results: Output<'rememberBatch'>['results'] = [];
    const facts: CommandOf<'rememberBatch'>['facts'] = [];
    const slots: number[] = [];
    input.facts.forEach((item, index) => {
      try {
        const fact = BATCH_ITEM.parse(item) as Parsed<typeof RememberBody>; // defaults applied
        facts.push({ entity: fact.entity, fact: fact.fact, confidence: fact.confidence, validFrom: optionalTime('valid_from', fact.valid_from) });
        slots.push(index);
        results.push({ index });
      } catch (error) {
        results.push({ index, error: batchItemError(index, ServiceError.from(error)) });
      }
    });
    return this.written(async (trail) => {
      if (facts.length > 0) {
        const stored = await this.stored(namespace, this.writer.send(namespace, { type: 'rememberBatch', facts }, trail));
        stored.forEach((memory, k) => (results[slots[k]!]!.memory = memory));
      }
      return { results, stored: facts.length, failed: input.facts.length - facts.length };
    });
  }

  async recall(input: Input<'recall'>, request: RequestContext): Promise<SerialisedAnswer<Output<'recall'>>> {
    recallTime(input, Date.now()); // a date the calendar lacks is refused here, before the query is embedded
    const { namespace } = request;
    const embedding = await this.queryVectorOf(namespace, input.query);
    const { answer, rowids, truncated, embedded } = await this.pool.run({ op: 'recall', namespace, input, ...embedding, after: this.readAfter(request) });
    if (embedded) this.queryCache.set(namespace, input.query, embedded);
    this.reinforcer.record(namespace, rowids);
    return serialisedAnswer(answer, truncated);
  }

  async recallGrouped(input: Input<'recallGrouped'>, request: RequestContext): Promise<SerialisedAnswer<Output<'recallGrouped'>>> {
    recallTime(input, Date.now()); // refused here (400), not reported as a failed pipeline
    try {
      const { namespace } = request;
      const embedding = await this.queryVectorOf(namespace, input.query);
      const { answer, rowids, truncated, embedded } = await this.pool.run({ op: 'recallGrouped', namespace, input, ...embedding, after: this.readAfter(request) });
      if (embedded) this.queryCache.set(namespace, input.query, embedded);
      this.reinforcer.record(namespace, rowids);
      return serialisedAnswer(answer, truncated);
    } catch (error) {
      // The spec names this failure: the recall pipeline failed → 500 with {error}. Its cause
      // can name files or SQL, so it goes to the log and the client gets the fixed message.
      const failure = ServiceError.from(error);
      if (failure.status < 500) throw failure;
      this.log.error({ err: error, code: failure.code }, 'recall_grouped: recall pipeline failed');
      throw fail.recallFailed();
    }
  }

  startEpisode(input: Input<'startEpisode'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'startEpisode'>>> {
    const startedAt = optionalTime('started_at', input.started_at);
    return this.written((trail) => this.writer.send(namespace, { type: 'startEpisode', participants: input.participants, startedAt }, trail));
  }

  addMessage(input: Input<'addMessage'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'addMessage'>>> {
    return this.written((trail) =>
      this.stored(namespace, this.writer.send(namespace, {
        type: 'addMessage', episodeId: input.episode_id, role: input.role, content: input.content, occurredAt: optionalTime('occurred_at', input.occurred_at),
      }, trail)));
  }

  /** Extraction over the given turns in the pool, then one writer command stores it all (one transaction). */
  async importEpisode(input: Input<'importEpisode'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'importEpisode'>>> {
    const startedAt = optionalTime('started_at', input.started_at);
    const messages = input.messages.map((m, i) => ({ role: m.role, content: m.content, occurredAt: optionalTime(`messages[${i}].occurred_at`, m.occurred_at) }));
    const { memories, extractor, fallbackReason } = await this.pool.run({
      op: 'extractImport', namespace, participants: input.participants, outcome: input.outcome, turns: messages.map(({ role, content }) => ({ role, content })),
    });
    this.onExtraction?.(extractor, fallbackReason);
    const extraction_tier = extractor === 'llm' ? 2 : 1;
    return this.written(async (trail) => ({
      ...(await this.stored(namespace, this.writer.send(namespace, {
        type: 'importEpisode', participants: input.participants, startedAt, outcome: input.outcome, messages, memories,
      }, trail))),
      extraction_tier,
    }));
  }

  /** Extraction runs in the pool (it may call an LLM); its results are stored by the writer. */
  async endEpisode(input: Input<'endEpisode'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'endEpisode'>>> {
    const { episode_id: episodeId, outcome } = input;
    const { memories, extractor, fallbackReason, sourceIds } = await this.pool.run({ op: 'prepareEpisodeEnd', namespace, episodeId, outcome });
    this.onExtraction?.(extractor, fallbackReason);
    const extraction_tier = extractor === 'llm' ? 2 : 1;
    return this.written(async (trail) => ({
      ...(await this.stored(namespace, this.writer.send(namespace, { type: 'endEpisode', episodeId, outcome, memories, sourceIds }, trail))),
      extraction_tier,
    }));
  }

  /** Snapshot in the pool, then delete in time-bounded chunks (core/entity-deletion.ts). */
  forget(input: Input<'forget'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'forget'>>> {
    return this.written((trail) => this.deletion.forget(namespace, input.entity_name, trail));
  }

  /**
   * Deletion snapshots, oldest first, as `memory-runtime snapshots --json` lists them: for a key
   * bound to a namespace, that namespace's only; for an operator key every one the folder holds
   * (SQLite: one folder for all namespaces; PostgreSQL: the request's namespace's rows), as before
   * keys were bound — a snapshot of another namespace is restored after switching to it.
   */
  async listSnapshots(_input: Input<'listSnapshots'>, { namespace, operator }: RequestContext): Promise<ValueAnswer<Output<'listSnapshots'>>> {
    const all = await this.pool.run({ op: 'listSnapshots', namespace });
    const own = operator ? all : all.filter((summary) => summary.namespace === namespace);
    return answerOf({ snapshots: await this.restoration.problems.addTo(own) });
  }

  /** Online restore: file read in the pool, memories put back by the writer in bounded chunks. */
  restoreSnapshot(input: Input<'restoreSnapshot'>, request: RequestContext): Promise<ValueAnswer<Output<'restoreSnapshot'>>> {
    return this.written((trail) => this.restoration.restore(request, input.snapshot_id, trail));
  }

  /** The namespace's entities by name, a page at a time (the console's entity list). */
  async listEntities(input: Input<'listEntities'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'listEntities'>>> {
    return answerOf(await this.pool.run({ op: 'listEntities', namespace, input }));
  }

  async listEpisodes(input: Input<'listEpisodes'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'listEpisodes'>>> {
    return answerOf(await this.pool.run({ op: 'listEpisodes', namespace, input }));
  }

  /** One memory, snapshot first, as an entity delete (core/memory-retraction.ts). */
  forgetMemory(input: Input<'forgetMemory'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'forgetMemory'>>> {
    return this.written((trail) => this.retraction.retract(namespace, input.memory_id, trail));
  }

  /** Read from the primary (PostgreSQL), as inspect: it always sees this node's writes. */
  async memoryHistory(input: Input<'memoryHistory'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'memoryHistory'>>> {
    const { answer, truncated } = await this.pool.run({ op: 'memoryHistory', namespace, input });
    return truncated ? { value: answer, truncated } : answerOf(answer);
  }

  async inspect(input: Input<'inspect'>, { namespace }: RequestContext): Promise<SerialisedAnswer<Output<'inspect'>>> {
    const { answer, truncated } = await this.pool.run({ op: 'inspect', namespace, input });
    return serialisedAnswer(answer, truncated);
  }

  async stats(_input: Input<'stats'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'stats'>>> {
    return answerOf(await this.pool.run({ op: 'stats', namespace }));
  }

  /** Promotion, decay and archiving of the request's namespace: planned in the pool, written by the writer, one run at a time. */
  consolidate(_input: Input<'consolidate'>, { namespace }: RequestContext): Promise<ValueAnswer<Output<'consolidate'>>> {
    return this.written((trail) => this.consolidator.run(namespace, trail));
  }

  /** Every namespace with its counts; operator keys only (a bound key sees only its own). */
  async listNamespaces(input: Input<'listNamespaces'>, { namespace, operator }: RequestContext): Promise<ValueAnswer<Output<'listNamespaces'>>> {
    if (!operator) throw fail.operatorOnly();
    return answerOf(await this.pool.run({ op: 'listNamespaces', namespace, input }));
  }
}
