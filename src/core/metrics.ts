// Prometheus metrics for one running service, in prom-client's text format at GET /metrics.
//
// Each service owns its Registry (not prom-client's global one), so several services in one
// process — the test suite does this — never collide on metric names. Event counts are
// pushed as they happen (requests, commits, recall stages); levels (queue depths, pool use,
// memories per type) are pulled from their owners at scrape time, so they cost nothing
// between scrapes and are never stale.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReadSide } from '../shared/protocol/pool.js';
import type { WriterBatchReport } from '../shared/protocol/writer.js';
import { RequestLatencyHistogram } from './request-latency.js';
import type { StatsResult } from '../shared/schemas.js';

const PREFIX = 'memory_runtime_';

/** Recall stages and single-memory operations are sub-millisecond on small data: start low. */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** What the scrape-time gauges read from; bound once the service parts exist. */
export interface MetricSources {
  writer: { readonly queueDepth: number };
  pool: { readonly utilization: number; readonly queueSize: number };
  limiter: { readonly rejected: number };
  stats(): Promise<StatsResult>;
  /**
   * Memories stored but not yet embedded. Optional until the embedding layer provides it; the
   * series is only exposed once it does, rather than reporting a misleading 0.
   */
  embeddingBacklog?: () => number | Promise<number>;
  /** Hits and misses of the query embedding cache since start, and its size. */
  queryCache?: { readonly hits: number; readonly misses: number; readonly bytes: number; readonly enabled: boolean };
  /** The IVF vector index as its last upkeep saw it (null before the first). */
  vectorIndex?: () => { cells: number; stale: number } | null;
  /** The embedding backfill: the vectors its floor attached since start (core/jobs/embedding-backfill.ts). */
  backfill?: { readonly embeddedByFloor: number };
  /** The shared vector codes held (every namespace's one copy together), SQLite only. */
  vectorCodes?: { readonly bytes: number; readonly namespaces: number; readonly limitBytes: number; readonly tooLargeNamespaces: number };
}

/** What the HTTP front end reports of each request. */
export interface RequestMetrics {
  observeRequest(method: string, route: string, status: number, seconds: number): void;
}

export class ServiceMetrics implements RequestMetrics {
  readonly registry = new Registry();
  private readonly extractions;
  private sources: MetricSources | null = null;
  private readonly requests;
  private readonly latency;
  private readonly batchSize;
  private readonly commitSeconds;
  private readonly recallStage;
  private readonly recallSnapshots;
  private readonly recallRecoveryConflicts;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    const labelNames = ['method', 'route', 'status'] as const;
    this.latency = new RequestLatencyHistogram(`${PREFIX}http_request_duration_seconds`, 'HTTP request latency by route pattern and status', FAST_BUCKETS, this.registry);
    // The request count is the latency histogram's _count per label set, copied at scrape
    // time: one update per request instead of two.
    const latency = this.latency;
    this.requests = new Counter({
      name: `${PREFIX}http_requests_total`, help: 'HTTP requests by route pattern and status', labelNames, registers,
      // Synchronous: reset and refill must not interleave with another scrape's (an await
      // between them let two overlapping renders both add the counts).
      collect() {
        this.reset();
        for (const { labels, count } of latency.counts()) this.inc(labels, count);
      },
    });
    this.extractions = new Counter({
      name: `${PREFIX}extractions_total`, help: 'Episode extractions by the extractor that produced the memories',
      labelNames: ['extractor'], registers,
    });
    this.batchSize = new Histogram({
      name: `${PREFIX}writer_batch_commands`, help: 'Write commands committed per transaction (group commit)',
      buckets: BATCH_BUCKETS, registers,
    });
    this.commitSeconds = new Histogram({
      name: `${PREFIX}writer_commit_duration_seconds`, help: 'Time to run and commit one writer transaction',
      buckets: FAST_BUCKETS, registers,
    });
    this.recallStage = new Histogram({
      name: `${PREFIX}recall_stage_duration_seconds`,
      help: 'Recall pipeline stage time: one series per signal (bm25, vector, graph, ...), hydrate and fusion',
      labelNames: ['stage'], buckets: FAST_BUCKETS, registers,
    });
    this.recallSnapshots = new Counter({
      name: `${PREFIX}recall_snapshots_total`,
      help: 'PostgreSQL with replicas: recall snapshots served by a replica, or by the primary when no replica had replayed the writes the recall must see (this node\'s last, the caller\'s Memory-Position) within SERVICE_READ_MAX_LAG_MS',
      labelNames: ['side'], registers,
    });
    this.recallRecoveryConflicts = new Counter({
      name: `${PREFIX}recall_recovery_conflicts_total`,
      help: 'PostgreSQL with replicas: recall snapshots a replica cancelled on a recovery conflict (replay removed row versions they could see, or took a lock they held), each run again on the primary and counted there in recall_snapshots_total{side="primary"}',
      registers,
    });
    this.registerLevels(registers);
  }

  /** Counts which side served a recall's snapshot (PostgreSQL with replicas only). */
  countRecallSnapshot(side: ReadSide): void {
    this.recallSnapshots.inc({ side });
  }

  /** Counts a recall snapshot a replica cancelled on a recovery conflict (the primary ran it). */
  countRecallRecoveryConflict(): void {
    this.recallRecoveryConflicts.inc();
  }

  /** Connects the scrape-time gauges to the running parts. */
  bind(sources: MetricSources): void {
    this.sources = sources;
    const backlog = sources.embeddingBacklog;
    if (backlog) {
      new Gauge({
        name: `${PREFIX}embedding_backlog`, help: 'Memories stored but not yet embedded', registers: [this.registry],
        async collect() { this.set(await backlog()); },
      });
    }
    const vectorIndex = sources.vectorIndex;
    if (vectorIndex) {
      new Gauge({
        name: `${PREFIX}vector_index_cells`, help: 'IVF cells of the newest generation (0 = no index: every vector is scanned)',
        registers: [this.registry],
        collect() { this.set(vectorIndex()?.cells ?? 0); },
      });
      new Gauge({
        name: `${PREFIX}vector_index_stale`, help: 'Vectors outside the newest IVF generation (still scanned, in cell 0 or an older one), at the last upkeep',
        registers: [this.registry],
        collect() { this.set(vectorIndex()?.stale ?? 0); },
      });
    }
    const codes = sources.vectorCodes;
    if (codes) {
      new Gauge({
        name: `${PREFIX}vector_codes_bytes`, help: 'Memory held by the shared vector codes, every namespace together (one copy for all pool threads)',
        registers: [this.registry],
        collect() { this.set(codes.bytes); },
      });
      new Gauge({
        name: `${PREFIX}vector_codes_namespaces`, help: 'Namespaces whose recalls scan the shared vector codes (the others scan vec0)',
        registers: [this.registry],
        collect() { this.set(codes.namespaces); },
      });
      new Gauge({
        name: `${PREFIX}vector_codes_limit_bytes`, help: 'SERVICE_VECTOR_CODES_MB in bytes: the most the shared vector codes may hold',
        registers: [this.registry],
        collect() { this.set(codes.limitBytes); },
      });
      new Gauge({
        name: `${PREFIX}vector_codes_too_large_namespaces`,
        help: 'Indexed namespaces whose vector codes alone need more than SERVICE_VECTOR_CODES_MB (their recalls scan vec0)',
        registers: [this.registry],
        collect() { this.set(codes.tooLargeNamespaces); },
      });
    }
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.latency.observe(method, route, status, seconds);
  }

  /** Which extractor served an episode's end ('llm', 'rules' after a fallback, 'none'). */
  observeExtraction(extractor: string): void {
    this.extractions.inc({ extractor });
  }

  observeBatch(report: WriterBatchReport): void {
    this.batchSize.observe(report.commands);
    this.commitSeconds.observe(report.commitMs / 1000);
  }

  observeRecallStages(timingsMs: Record<string, number>): void {
    for (const [stage, ms] of Object.entries(timingsMs)) this.recallStage.observe({ stage }, ms / 1000);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  private registerLevels(registers: Registry[]): void {
    const metrics = this;
    new Gauge({
      name: `${PREFIX}writer_queue_depth`, help: 'Write commands sent to the writer thread and not yet committed', registers,
      collect() { if (metrics.sources) this.set(metrics.sources.writer.queueDepth); },
    });
    new Gauge({
      name: `${PREFIX}pool_utilization_ratio`, help: 'Fraction of read/CPU pool capacity in use (0..1)', registers,
      collect() { if (metrics.sources) this.set(metrics.sources.pool.utilization); },
    });
    new Gauge({
      name: `${PREFIX}pool_queue_size`, help: 'Tasks waiting for a free pool worker', registers,
      collect() { if (metrics.sources) this.set(metrics.sources.pool.queueSize); },
    });
    // Running totals kept by their sources (the cache, the backfill, the limiter); each counter
    // follows its total by the difference (undefined: no such source, nothing counted).
    const follow = (name: string, help: string, read: (sources: MetricSources) => number | undefined) => {
      let seen = 0;
      new Counter({
        name, help, registers,
        collect() {
          const total = metrics.sources ? read(metrics.sources) : undefined;
          if (total === undefined) return;
          if (total > seen) this.inc(total - seen);
          seen = total;
        },
      });
    };
    follow(`${PREFIX}query_embedding_cache_hits_total`, 'Recalls whose query embedding came from the cache', (s) => s.queryCache?.hits);
    follow(`${PREFIX}query_embedding_cache_misses_total`, 'Recalls that had to embed their query (cache enabled)', (s) => s.queryCache?.misses);
    new Gauge({
      name: `${PREFIX}query_embedding_cache_bytes`, help: 'Bytes held by the query embedding cache (SERVICE_QUERY_CACHE_BYTES bounds it)', registers,
      collect() { this.set(metrics.sources?.queryCache?.bytes ?? 0); },
    });
    follow(`${PREFIX}embedding_floor_vectors_total`,
      'Vectors the embedding backfill attached through the interactive lane while its background lane got no CPU (the floor; never with SERVICE_EMBEDDER=openai)',
      (s) => s.backfill?.embeddedByFloor);
    follow(`${PREFIX}rate_limit_rejections_total`, 'Requests refused with 429 by the rate limiter', (s) => s.limiter.rejected);
    new Gauge({
      name: `${PREFIX}memories`, help: 'Active memories in the served namespace, by type', labelNames: ['type'], registers,
      async collect() {
        if (!metrics.sources) return;
        try {
          const stats = await metrics.sources.stats();
          this.set({ type: 'episodic' }, stats.episodic_memories);
          this.set({ type: 'semantic' }, stats.semantic_memories);
          this.set({ type: 'procedural' }, stats.procedural_memories);
        } catch {
          // A failed count (pool shutting down) keeps the last values rather than failing the scrape.
        }
      },
    });
  }
}
