// Wires the parts together: writer thread → read pool → operations → HTTP server.
// Shutdown runs in the reverse order: stop listening, drain, close pool, close writer.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { databaseLabel, type Config } from './shared/config.js';
import { createLogger, type Logger } from './shared/logger.js';
import { WriterClient } from './core/writer-client.js';
import { ReadPool } from './core/pool/read-pool.js';
import { QueryEmbeddingCache } from './core/query-embedding-cache.js';
import { QueryEmbeddingBatcher } from './core/query-embedding-batcher.js';
import { embedderIdentity } from './shared/embedder-identity.js';
import { MemoryOperations } from './core/operations/memory-operations.js';
import { buildRoutes } from './http/routes.js';
import { HttpServer } from './http/server.js';
import { assertNativeUws } from './http/native-check.js';
import { EmbeddingBackfill } from './core/jobs/embedding-backfill.js';
import { Reinforcer } from './core/reinforcement.js';
import { createMcpMount } from './http/mcp/handler.js';
import { operatorMounts, withOperatorRoutes } from './http/operator-routes.js';
import { ServiceMetrics } from './core/metrics.js';
import { acquireLock, localUrl, SERVICE_OWNER } from './shared/instance-lock.js';
import { sweepPartialSnapshots } from './shared/snapshot-file.js';
import { unreadableDatabase } from './shared/unreadable-database.js';
import { Consolidator } from './core/jobs/consolidator.js';
import { VectorIndexer } from './core/jobs/ivf-upkeep.js';
import { LOCAL_JOB_LOCKS } from './core/jobs/job-locks.js';
import { PostgresJobLocks } from './core/jobs/postgres-job-locks.js';
import { waitForDatabases } from './core/postgres-reachable.js';
import { LOCAL_CLUSTER_TURNS, PostgresClusterTurns } from './core/cluster-turns.js';
import { openExposureWarning } from './http/open-exposure.js';
import { KeysFile } from './http/keys-file.js';
import type { ApiKey } from './http/auth.js';

const PACKAGE: { name: string; version: string } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);
export const VERSION: string = PACKAGE.version;
/** The package name; MCP clients see it as the server name. */
export const NAME: string = PACKAGE.name;

export interface RunningService {
  readonly port: number;
  readonly config: Config;
  readonly operations: MemoryOperations;
  readonly writer: WriterClient;
  readonly backfill: EmbeddingBackfill;
  readonly metrics: ServiceMetrics;
  readonly consolidator: Consolidator;
  readonly vectorIndexer: VectorIndexer;
  readonly pool: ReadPool;
  /** SERVICE_API_KEYS_FILE, kept in step with the file; null when unset. */
  readonly keysFile: KeysFile | null;
  close(): Promise<void>;
}

export interface ServiceHooks {
  /**
   * The service can no longer work (its writer thread died): main.ts exits the process so the
   * supervisor restarts it. Tests leave it unset and observe the unhealthy service instead.
   */
  onFatal?(reason: string): void;
}

export async function startService(config: Config, log: Logger = createLogger(), hooks: ServiceHooks = {}): Promise<RunningService> {
  assertNativeUws();
  // First: an unreadable keys file is a configuration error, before anything is started.
  let fileKeys: ReadonlyMap<string, ApiKey> = new Map();
  let server: HttpServer | null = null;
  const keysFile = config.apiKeysFile
    ? KeysFile.open(config.apiKeysFile, (keys) => { fileKeys = keys; server?.replaceFileKeys(keys); }, log)
    : null;
  // Offline CLI commands (restore, import) check this lock, and this refuses to start while one runs.
  mkdirSync(dirname(config.dbPath), { recursive: true });
  const lock = acquireLock(config.dbPath, SERVICE_OWNER);
  // No delete is writing a snapshot now: any `.json.tmp` is a crash's leftover.
  const swept = sweepPartialSnapshots(config.snapshotDir);
  if (swept > 0) log.warn({ swept, folder: config.snapshotDir }, 'removed partial snapshot files a crash left behind (.json.tmp)');
  let writer: WriterClient;
  try {
    if (config.postgres) {
      await waitForDatabases(config.postgres,
        (target, reason) => log.warn({ variable: target.variable, db: target.label, reason, waitMs: config.postgres!.startTimeoutMs }, 'database not reachable yet; retrying'),
        (target, reason) => log.warn({ variable: target.variable, db: target.label, reason }, 'replica not reachable at start; recall reads the primary until it answers'));
    }
    writer = await WriterClient.start(config);
  } catch (error) {
    lock.release();
    keysFile?.close();
    throw (config.postgres ? null : unreadableDatabase(config.dbPath, error)) ?? error;
  }
  if (!writer.priority.lowered) {
    // Once, at start: writes still work, but the writer then competes with recall for the cores.
    log.warn({ reason: writer.priority.reason }, 'writer thread priority not lowered: writes will compete with recall for the CPU');
  }
  writer.onFailure = (cause) => {
    log.fatal({ cause, db: databaseLabel(config) }, 'writer thread died: every write fails and /v1/health answers 503; exiting so the supervisor restarts the service');
    hooks.onFatal?.(cause);
  };
  if (config.embedder.kind === 'use-static') {
    // One distillation on a cold start (in a one-off thread), rather than one per pool thread at
    // once. A failure here (e.g. no writable cache place) leaves each thread to distil on its own.
    try {
      const { ensureTableCached } = await import('./workers/embedding/use-static.js');
      const started = performance.now();
      if ((await ensureTableCached()) === 'distilled') log.info({ ms: Math.round(performance.now() - started) }, 'use-static table distilled and cached');
    } catch (error) {
      log.warn({ err: error }, 'use-static table not cached before the pool started: each pool thread distils its own');
    }
  }
  const pool = new ReadPool(config, log);
  // Over PostgreSQL the nodes sharing the database run each background job once between them.
  const jobLocks = config.postgres ? new PostgresJobLocks(config.postgres.url, writer.namespaceId) : LOCAL_JOB_LOCKS;
  // No floor for an endpoint embedder (core/jobs/embedding-backfill.ts says why).
  const backfill = new EmbeddingBackfill(pool, writer, log, jobLocks, config.namespace, config.embedder.kind !== 'openai');
  const vectorIndexer = new VectorIndexer(pool, writer, log, config.vectorIndexMinVectors, undefined, jobLocks, config.namespace);
  backfill.onAttached = (namespace) => vectorIndexer.poke(namespace);
  vectorIndexer.onRepaired = (namespace) => backfill.poke(namespace);
  const reinforcer = new Reinforcer(writer, log);
  const consolidator = new Consolidator(pool, writer, backfill, log, config.consolidateIntervalMs, jobLocks, config.consolidateWaitMs, config.namespace);
  const queryCache = new QueryEmbeddingCache(embedderIdentity(config).id, config.queryCacheBytes);
  // Deletes and restores in progress are seen by every node sharing the database.
  const clusterTurns = config.postgres ? new PostgresClusterTurns(config.postgres.url, log) : LOCAL_CLUSTER_TURNS;
  const operations = new MemoryOperations(config, writer, pool, backfill, reinforcer, consolidator, log, queryCache, VERSION, clusterTurns);
  // A local model answers batches far cheaper per query; a hashing or GloVe vector costs less
  // than the hand-off, and an endpoint's failures are its own recall's to see.
  if (config.embedder.kind === 'use') {
    operations.queryBatcher = new QueryEmbeddingBatcher(
      async (texts) => (await pool.run({ op: 'embedQueries', namespace: config.namespace, texts })).vectors,
      config.poolThreads);
  }
  const metrics = new ServiceMetrics();
  const routes = withOperatorRoutes(buildRoutes(), metrics, {
    version: VERSION, auth: config.authEnabled, rateLimited: config.rateLimitPerMinute > 0,
  });
  const mcp = createMcpMount({ config, ops: operations, log, name: NAME, version: VERSION });
  server = new HttpServer(config, operations, routes, log, [mcp, ...operatorMounts(log, { auth: config.authEnabled })], metrics);
  server.replaceFileKeys(fileKeys);
  writer.onBatch = (report) => metrics.observeBatch(report);
  // Offline (the default install) every `end` uses the rules: said once here, so the log
  // explains tier-1 memories before the first per-call fallback warning does.
  log.info('extraction will use the offline rules (tier 1) until the LLM extraction endpoint answers');
  let llmAnswered = false;
  operations.onExtraction = (extractor, fallbackReason) => {
    metrics.observeExtraction(extractor);
    if (extractor === 'llm' && !llmAnswered) {
      llmAnswered = true;
      log.info('the LLM extraction endpoint answered: extraction uses it (tier 2)');
    }
    if (fallbackReason) log.warn({ reason: fallbackReason }, 'LLM extraction unavailable; used rule-based extraction');
  };
  pool.onStageTimings = (_op, timings) => metrics.observeRecallStages(timings);
  pool.onReadSide = (side) => metrics.countRecallSnapshot(side);
  pool.onRecoveryConflict = () => metrics.countRecallRecoveryConflict();
  // Rate-limited here, not per thread: every recall of an outage would otherwise say it.
  let primaryFailureLoggedAt = -Infinity;
  pool.onPrimaryFailure = (cause) => {
    if (performance.now() - primaryFailureLoggedAt < 10_000) return;
    primaryFailureLoggedAt = performance.now();
    log.warn({ cause, db: config.postgres?.label }, 'primary unreachable: recall serves what the replicas have replayed (writes acknowledged since may be missing)');
  };
  pool.onThreadLost = (error) => log.warn({ err: error }, 'a pool thread ended on the postgres client\'s null-socket write; its read ran again on another thread');
  writer.onDatabaseState = (available) => {
    if (available) log.info({ db: config.postgres?.label }, 'primary found again: writes resume');
    else log.warn({ db: config.postgres?.label, waitMs: config.postgres?.writeWaitMs }, 'primary lost: writes answer 503 DATABASE_UNAVAILABLE until one answers');
  };
  pool.onReplicaFailure = (cause) => log.warn({ cause, replicas: config.postgres?.readLabel },
    'replica unreachable: recall reads the primary (retried every 2 s; said at most once a minute per pool thread)');
  metrics.bind({
    writer, pool, limiter: server.limiter,
    // The service's own namespace: the gauges keep meaning what they meant with one namespace.
    stats: async () => (await operations.stats({}, { namespace: config.namespace, operator: true })).value,
    queryCache,
    backfill,
    embeddingBacklog: async () => (await pool.run({ op: 'embeddingBacklog', namespace: config.namespace })).count,
    vectorIndex: () => vectorIndexer.status,
    ...(config.postgres ? {} : { vectorCodes: pool.vectorCodes }),
  });
  let port: number;
  /**
   * Stops what runs behind the server, in dependency order (also when start-up fails after this
   * point). Each step runs whatever the one before did: a PostgreSQL lock that cannot be given
   * back must not leave the writer, the pool or the instance lock open.
   */
  const stopParts = async (): Promise<void> => {
    const steps: [string, () => unknown][] = [
      // A run in progress needs the pool and the writer: let it finish first.
      ['consolidator', () => consolidator.stop()],
      ['backfill', () => backfill.close()],
      ['vector indexer', () => vectorIndexer.close()],
      // Another node takes the jobs over from here.
      ['job locks', () => jobLocks.close()],
      // The drain ended every delete and restore: no turn of this node is left open.
      ['cluster turns', () => clusterTurns.close()],
      ['reinforcer', () => reinforcer.flush()],
      ['pool', () => pool.close()],
      ['writer', () => writer.close()],
      ['instance lock', () => lock.release()],
      ['keys file', () => keysFile?.close()],
    ];
    for (const [part, stop] of steps) {
      try {
        await stop();
      } catch (error) {
        log.error({ err: error, part }, 'stopping failed; going on with the rest');
      }
    }
  };
  try {
    // Before listening: the health check answers only once recall runs at its warm speed.
    const warm = await pool.warmUp();
    log.info({ warmUpMs: Math.round(Math.max(...warm.map((w) => w.ms))), threads: warm.length }, 'pool threads warmed up');
    port = await server.listen();
  } catch (error) {
    await stopParts();
    throw error;
  }
  // `memory-runtime restore` finds the service here (the real port, even with PORT=0).
  lock.serving(localUrl(config.host, port));
  // Memories stored while the service was down (or before an embedder change) get vectors now.
  backfill.poke();
  // Vectors restored, imported or upgraded since the last run wait in the unassigned cell.
  vectorIndexer.poke();
  consolidator.start();
  log.info({
    port, host: config.host, db: databaseLabel(config), ...(config.postgres?.readLabel ? { replicas: config.postgres.readLabel } : {}),
    namespace: config.namespace, auth: config.authEnabled,
  }, 'listening');
  const exposed = openExposureWarning(config.host, config.authEnabled);
  if (exposed) log.warn(exposed.fields, exposed.msg);

  let closing: Promise<void> | null = null;
  return {
    port,
    config,
    operations,
    writer,
    backfill,
    metrics,
    consolidator,
    vectorIndexer,
    pool,
    keysFile,
    close() {
      closing ??= (async () => {
        // First: a request or job waiting for another node's lock (a consolidation run there)
        // answers SHUTTING_DOWN now, instead of holding the drain and the stop for as long as
        // that run takes. Runs already holding their lock go on.
        jobLocks.stopWaiting();
        await server.close(config.shutdownGraceMs);
        await stopParts();
        log.info('stopped');
      })();
      return closing;
    },
  };
}
