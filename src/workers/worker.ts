// Piscina worker: one read-only connection, one set of prepared statements and one embedder
// per thread, created when the thread starts and reused by every task it runs.
import { workerData } from 'node:worker_threads';
import { fail, toWireError } from '../shared/errors.js';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import type { JsonBytes, PoolHandlers, PoolOp, PoolReply, PoolResults, PoolWorkerData, ReadSide, ServedNote, StageTimings, TaskNotes, TaskOf } from '../shared/protocol/pool.js';
import { FIRST_USE_KIND, MAX_NAMESPACE_PAGE, type InspectResult, type MemoryType, type ValidatedListNamespaces } from '../shared/schemas.js';
import { openReadPorts } from './open-read-port.js';
import type { ReadPort } from './port/read-port.js';
import type { RecallCodes } from './port/candidates.js';
import { BoundedMap } from '../shared/bounded-map.js';

/** Namespaces whose ports (and caches) each pool thread keeps; the rest are opened again when read. */
const NAMESPACE_PORTS = 32;
/** Holds no rows (namespace ids start at 1): a namespace that does not exist reads as empty. */
const ABSENT_NAMESPACE_ID = 0;
import { closeWhenAsked } from '../shared/pool-close.js';
import { RecallEngine, toMemory, type RecallHit } from './recall/engine.js';
import { groupHits } from './recall/grouping.js';
import { findContradictions } from './recall/contradictions.js';
import { extractEpisode, extractTurns } from './extraction/episode.js';
import { memoryHistory } from './memory-history.js';
import { queryWindow } from './recall/query-time.js';
import { LlmExtractor } from './extraction/llm.js';
import { ConsolidationPlanner } from './consolidation/planner.js';
import { createEmbedder } from './embedding/index.js';
import { embeddingInput } from './embedding/embedder.js';
import { withinBudget, type Budgeted } from './port/response-budget.js';
import { warmUp } from './warm-up.js';
import { lowerThreadPriority, nameThread } from '../shared/os-thread.js';
import { recallTime, type RecallTimeInput } from '../shared/event-time.js';
import { checkSnapshotById, readMemoriesById, SnapshotFileError } from '../shared/snapshot-files.js';

const { config, lane, closeChannel } = workerData as PoolWorkerData;
// Named by lane (`top -H`, bench:mixed's per-thread CPU). Background threads yield the CPU
// to interactive ones whenever both want it.
nameThread(`mr-${lane ?? 'pool'}`);
if (lane === 'background') lowerThreadPriority();
// Every read of storage goes through a port, one per namespace over this thread's connection(s);
// the engine ranks over whichever adapter it is.
// The background lane's reads are upkeep, each page touched once (the embedding backfill's look
// for pending rows, IVF status counts, training samples and moves, codes builds): through SQLite's
// page cache, not the memory map, where every page they touched stayed counted in the service's
// RSS as the warm-up's did (docs/vector-codes.md, "On by default"). Its first task after a start
// mapped the file before any client had read.
const { portFor, directory, close: closeStore, primaryLost, unmappedDuring } = openReadPorts(lane === 'background' ? { ...config, readMmapBytes: 0 } : config);
// Before the pool terminates this thread: its sessions end with a goodbye, not a dropped socket.
if (closeChannel) closeWhenAsked(closeChannel, closeStore);

/** What a task reads one namespace with: its port, and what ranks and plans over it. */
interface NamespaceReads {
  store: ReadPort;
  engine: RecallEngine;
  consolidation: ConsolidationPlanner;
}

const readsOf = (namespaceId: number, namespace: string): NamespaceReads => {
  const store = portFor(namespaceId, namespace);
  return { store, engine: new RecallEngine(store), consolidation: new ConsolidationPlanner(store, config) };
};
/**
 * The most recently read namespaces' ports, with their caches (IVF cells, statements): bounded
 * in total, however many tenants the database holds. A namespace that does not exist reads as
 * empty (ABSENT_NAMESPACE_ID holds no rows) and is not kept: it may be created any moment.
 */
const namespaces = new BoundedMap<number, NamespaceReads>(NAMESPACE_PORTS);
async function namespaceReads(namespace: string): Promise<NamespaceReads> {
  const id = await directory.idOf(namespace);
  if (id === undefined) return readsOf(ABSENT_NAMESPACE_ID, namespace);
  return namespaces.getOrCreate(id, () => readsOf(id, namespace));
}

/** PostgreSQL keeps deletion snapshots in tables (written in the delete's transaction); SQLite in files. */
const snapshotsInTables = config.postgres !== null;
// Loading starts with the thread; tasks await it.
const embedder = createEmbedder(config);
// Keep an unhandled rejection from killing the thread; tasks see the error when they await.
embedder.catch(() => {});
const llm = new LlmExtractor(config);
// Interactive threads warm up as soon as they start (overlapping the rest of the service's
// start); the pool's warmUp task waits for it before the service listens. A thread that
// replaces a failed one warms itself the same way.
// Over PostgreSQL only the embedder warms: a recall there reads over the network, may wait on
// a replica's connect timeout, and would take the report of a replica failure that belongs to
// the first client recall (workers/postgres/replica.ts says each failure once).
// The warm-up reads through SQLite's page cache, not the memory map: it is there to compile code,
// and at 1M memories its recalls touched ~730 MiB of the file per thread, left counted in the
// service's peak RSS (docs/vector-codes.md, "On by default").
// Awaited at the module's top level: Piscina gives a thread started after the pool (one that
// replaces a thread that died) no task until its module has loaded, so no client recall runs on
// it while its warm-up has the map off, and the warm-up runs on a free event loop (a thread idle
// between tasks waits in Atomics.wait, where a warm-up left running stalled until a client's task
// came, and went on unmapped beside it). The first threads are handed tasks at once: theirs wait
// in the thread's port until the warm-up ends, as the pool's warmUp tasks did before.
// What fails around the warm-up (the namespace's reads, the map switch) is kept for the pool's
// warmUp task to report, not thrown here: a module that fails to load makes Piscina stop
// replacing the lane's threads, so a failure on a replacement thread would leave the lane empty.
const warmedUp = lane === 'interactive'
  ? await unmappedDuring(async () => warmUp(embedder, {
    embed: config.embedder.kind !== 'openai', recall: config.postgres === null ? (await namespaceReads(config.namespace)).engine : null,
  })).then((report) => ({ report }), (error: unknown) => ({ error }))
  : null;

/** The query's vector, or null if the embedder fails: recall then runs on the other signals. */
async function embedQuery(query: string): Promise<Float32Array | null> {
  try {
    const [vector] = await (await embedder).embed([query]);
    return vector;
  } catch {
    return null;
  }
}

/** Queries of several recalls in one model call: USE-lite costs ~2.4× less per query in batches of 8. */
async function embedQueries(texts: string[]): Promise<PoolResults['embedQueries']> {
  try {
    return { vectors: await (await embedder).embed(texts) };
  } catch {
    return { vectors: texts.map(() => null) };
  }
}

/**
 * The recall's hits in rank order, cut to the response budget, and the query vector when it was
 * computed here rather than handed in.
 */
async function recallHits(
  { engine }: NamespaceReads, query: string, entity: string | null, types: MemoryType[] | null, limit: number, explain: boolean,
  cached: Float32Array | undefined, timings: StageTimings, after: string | undefined, notes: TaskNotes,
  timeInput: RecallTimeInput, vectorCodes: RecallCodes, embedMs?: number,
): Promise<Budgeted<RecallHit> & { embedded?: Float32Array }> {
  let embedded: Float32Array | undefined;
  if (embedMs !== undefined) timings.embed = embedMs;
  if (!cached) {
    const started = performance.now();
    embedded = (await embedQuery(query)) ?? undefined;
    timings.embed = performance.now() - started;
  }
  const onServed = (side: ReadSide, note?: ServedNote) => Object.assign(notes, note, { readSide: side });
  const now = Date.now();
  const time = recallTime(timeInput, now);
  const request = { query, entity, types, limit, explain, queryVector: cached ?? embedded ?? null, after, onServed, time, vectorCodes };
  // A time the query speaks of narrows it, unless the client gave the interval itself; when
  // nothing of that time matches, the recall answers as if the query had named none.
  const during = timeInput.since === undefined && timeInput.until === undefined ? queryWindow(query, time.validAt) : null;
  let hits = during ? await engine.recallWithin({ ...request, time: { ...time, during } }, config.maxResponseBytes, now, timings) : null;
  if (!hits || hits.kept.length === 0) hits = await engine.recallWithin(request, config.maxResponseBytes, now, timings);
  return embedded ? { ...hits, embedded } : hits;
}

async function inspect({ store }: NamespaceReads, entityName: string, limit: number, includeSuperseded: boolean): Promise<PoolResults['inspect']> {
  const entity = await store.entity(entityName);
  if (!entity) throw fail.entityNotFound(entityName);
  const rows = [...await store.entityMemories(entity.id, limit, config.maxResponseBytes, includeSuperseded)];
  let { kept, truncated } = withinBudget(rows, (row) => row.content, config.maxResponseBytes);
  // The facts listed that conflict (recall's rule; the console flags them). Their descriptions
  // quote the facts, so they count against the response budget too: the memories are cut again
  // to leave them room, and only pairs of memories still listed are reported.
  let contradictions = findContradictions(kept);
  if (contradictions.length > 0) {
    const room = config.maxResponseBytes - Buffer.byteLength(JSON.stringify(contradictions));
    ({ kept, truncated } = withinBudget(rows, (row) => row.content, Math.max(0, room)));
    const listed = new Set(kept.map((row) => row.id));
    contradictions = contradictions.filter((c) => c.memory_ids?.every((id) => listed.has(id)));
    truncated ||= kept.length < rows.length;
  }
  const result: InspectResult = { entity: entity.name, episodic: [], semantic: [], procedural: [], contradictions };
  for (const row of kept) {
    const memory = toMemory(row, null);
    if (row.memory_type !== 'episodic') result[row.memory_type].push({ ...memory, extraction_tier: row.extraction_tier });
    else result.episodic.push(row.episode_id !== null ? { ...memory, episode_id: row.episode_id, ...(row.seq === null ? {} : { seq: row.seq }) } : memory);
  }
  return { answer: encoded(result), truncated };
}

const utf8 = new TextEncoder();

/**
 * The client's answer as JSON, serialised here once: the main thread sends these bytes as they
 * are (REST) instead of receiving a structured clone and serialising it again. TextEncoder gives
 * the bytes a buffer of their own (Buffer.from may share its pool), so the buffer can move.
 */
function encoded<T>(result: T): JsonBytes<T> {
  // The one place bytes become JsonBytes<T>: the brand says they are T's JSON.
  return utf8.encode(JSON.stringify(result)) as JsonBytes<T>;
}

async function embedPending({ store }: NamespaceReads, limit: number, newestFirst: boolean): Promise<PoolResults['embedPending']> {
  const started = performance.now();
  const rows = await store.unembedded(limit + 1, newestFirst);
  const batch = rows.slice(0, limit);
  if (batch.length === 0) return { items: [], unembeddable: [], remaining: false, ms: performance.now() - started };
  const model = await embedder;
  const texts = batch.map((row) => embeddingInput(row.content));
  let vectors: (Float32Array | null)[];
  try {
    vectors = await model.embed(texts);
  } catch (batchError) {
    // One bad row must not hold the backlog forever: try each alone. If none succeeds, the
    // embedder itself is down — fail, and the backfill retries the batch later.
    vectors = await Promise.all(texts.map((text) => model.embed([text]).then(([v]) => v, () => null)));
    if (vectors.every((v) => v === null)) throw batchError;
  }
  const items = await Promise.all(batch.map(async (row, i) => {
    const vector = vectors[i];
    return vector ? [{ rowid: row.rowid, vector, cell: await store.cellFor(vector), mentionedEntityIds: await store.entitiesNamedIn(row.content) }] : [];
  }));
  return {
    items: items.flat(),
    unembeddable: batch.filter((_, i) => vectors[i] === null).map((row) => row.rowid),
    remaining: rows.length > limit,
    ms: performance.now() - started,
  };
}

/** A page of the namespaces with their counts, for the operator's listing (GET /v1/namespaces). */
async function listNamespaces({ limit = MAX_NAMESPACE_PAGE, offset = 0 }: ValidatedListNamespaces): Promise<PoolResults['listNamespaces']> {
  return directory.page(limit, offset);
}

/**
 * Runs a recall with the shared vector codes its task was lent (SQLite): the store travels in
 * this recall's own context (RecallCodes), not in the thread's state, so recalls running at once
 * on one thread each scan the store they were lent, and none is reachable after its task.
 * Notes when an indexed namespace had no store to scan, so the registry builds one.
 */
async function withVectorCodes<T>(handle: TaskOf<'recall'>['vectorCodes'], notes: TaskNotes, work: (codes: RecallCodes) => Promise<T>): Promise<T> {
  const codes: RecallCodes = { handle: handle ?? null };
  try {
    return await work(codes);
  } finally {
    if (codes.wanted) notes.codesWanted = true;
  }
}

/** One handler per task (a missing one fails to compile), each resolving to its task's result. */
const handlers: PoolHandlers = {
  async recall(task, timings, notes) {
    const { query, entity, types, limit, explain } = task.input;
    const reads = await namespaceReads(task.namespace);
    const { kept: hits, truncated, embedded } = await withVectorCodes(task.vectorCodes, notes,
      (codes) => recallHits(reads, query, entity, types, limit, explain, task.queryVector, timings, task.after, notes, task.input, codes, task.embedMs));
    const rows = hits.map((hit) => hit.row);
    return {
      answer: encoded({ memories: hits.map((hit) => toMemory(hit.row, hit.score, hit.explanation)), contradictions: findContradictions(rows) }),
      rowids: rows.map((row) => row.rowid),
      truncated,
      embedded,
    };
  },
  async recallGrouped(task, timings, notes) {
    const { query, entity, limit, order, max_groups, explain } = task.input;
    const reads = await namespaceReads(task.namespace);
    const { store } = reads;
    const { kept: hits, truncated, embedded } = await withVectorCodes(task.vectorCodes, notes,
      (codes) => recallHits(reads, query, entity, null, limit, explain, task.queryVector, timings, task.after, notes, task.input, codes, task.embedMs));
    const episodeIds = [...new Set(hits.flatMap((hit) => (hit.row.episode_id ? [hit.row.episode_id] : [])))];
    const groups = groupHits(hits, await store.episodeStarts(episodeIds), order, max_groups);
    // Only what is returned counts as recalled.
    const returned = new Set(groups.flatMap((g) => g.memories.map((m) => m.id)));
    return {
      answer: encoded({ groups }),
      rowids: hits.filter((hit) => returned.has(hit.row.id)).map((hit) => hit.row.rowid),
      truncated,
      embedded,
    };
  },
  inspect: async (task) => inspect(await namespaceReads(task.namespace), task.input.entity, task.input.limit, task.input.include_superseded ?? false),
  stats: async (task) => (await namespaceReads(task.namespace)).store.stats(),
  memoryHistory: async (task) => {
    const rows = await (await namespaceReads(task.namespace)).store.memoryHistory(task.input.memory_id, config.maxResponseBytes);
    if (!rows) throw fail.memoryNotFound(task.input.memory_id);
    return memoryHistory(rows, config.maxResponseBytes);
  },
  embedPending: async (task) => embedPending(await namespaceReads(task.namespace), task.limit, task.newestFirst ?? false),
  embeddingBacklog: async (task) => ({ count: await (await namespaceReads(task.namespace)).store.unembeddedCount() }),
  embedQueries: (task) => embedQueries(task.texts),
  warmUp: async () => {
    if (warmedUp && 'error' in warmedUp) throw warmedUp.error;
    return warmedUp?.report ?? { threadId: 0, ms: 0, embedded: 0, recalled: 0 };
  },
  prepareEpisodeEnd: async (task) => extractEpisode((await namespaceReads(task.namespace)).store, llm, task.episodeId, task.outcome),
  extractImport: async (task) => {
    const { store } = await namespaceReads(task.namespace);
    // Participants not stored yet are read as the entities their first use will create.
    const participants = await Promise.all(task.participants.map(async (name) => (await store.entity(name)) ?? { id: '', name, kind: FIRST_USE_KIND }));
    return extractTurns(llm, participants, task.turns, task.outcome);
  },
  planConsolidation: async (task) => (await namespaceReads(task.namespace)).consolidation.plan(task.now, embedder),
  vectorIndexStatus: async (task) => (await namespaceReads(task.namespace)).store.vectorIndexStatus(),
  trainVectorIndex: async (task) => (await namespaceReads(task.namespace)).store.trainVectorIndex(),
  staleVectorMoves: async (task) => ({ moves: await (await namespaceReads(task.namespace)).store.staleVectorMoves(task.limit) }),
  refreshVectorCodes: async (task) => (await (await namespaceReads(task.namespace)).store.refreshVectorCodes?.(task.previous, task.limitBytes))
    ?? { handle: null, outcome: 'none', vectors: 0, bytes: 0 },
  snapshotEntity: async (task) => (await namespaceReads(task.namespace)).store.snapshotEntity(task.entity, task.maxRowid),
  snapshotMemory: async (task) => (await namespaceReads(task.namespace)).store.snapshotMemory(task.memoryId),
  namespaceNames: () => directory.names(),
  pendingNamespaces: async () => {
    const started = performance.now();
    const names = await directory.pending();
    return { names, ms: performance.now() - started };
  },
  listNamespaces: (task) => listNamespaces(task.input),
  listSnapshots: (task) => withSnapshotErrors('listing', async () => (await (await namespaceReads(task.namespace)).store.listSnapshots())
    .map((summary) => (summary.problem === null ? summary : { ...summary, problem: withoutFolder(summary.problem) }))),
  // The online restore: SQLite's deletion snapshots are files, streamed through one descriptor
  // by byte offset, outside the port; PostgreSQL's are rows, checked and streamed by the port
  // (keyset by memory rowid).
  checkSnapshot: (task) => withSnapshotErrors(task.snapshotId, async () => (snapshotsInTables
    ? { stored: await (await namespaceReads(task.namespace)).store.checkSnapshot(task.snapshotId) }
    : checkSnapshotById(config.snapshotDir, task.snapshotId))),
  readSnapshotMemories: (task) => withSnapshotErrors(task.snapshotId,
    () => readMemoriesById(config.snapshotDir, task.snapshotId, task.fd, task.framed, task.from)),
  readStoredSnapshotMemories: (task) => withSnapshotErrors(task.snapshotId, async () => (await namespaceReads(task.namespace)).store.snapshotMemories(task.snapshotId, task.after)),
  listEntities: async (task) => (await namespaceReads(task.namespace)).store.entities(task.input),
  listEpisodes: async (task) => (await namespaceReads(task.namespace)).store.episodes(task.input),
};

/** A response must not reveal the server's folders: the snapshot folder is called `snapshots`. */
const withoutFolder = (message: string) => message.replaceAll(config.snapshotDir, 'snapshots');

/** A snapshot's problem as the client's error. */
async function withSnapshotErrors<T>(id: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof SnapshotFileError)) throw error;
    if (error.kind === 'missing') throw fail.snapshotNotFound(id);
    const reason = withoutFolder(error.message);
    throw fail.snapshotUnusable(id, reason);
  }
}

/** Handles one task; an answer serialised for the client moves to the main thread uncopied. */
export default async function handle<K extends PoolOp>(task: TaskOf<K>): Promise<PoolReply<K> | ReturnType<typeof move>> {
  try {
    const timings: StageTimings = {};
    const notes: TaskNotes = {};
    // TypeScript does not narrow `task.op` to K by itself; the handler map's type guarantees it.
    // Reads only: one that met a lost primary (a failover) runs once more, on the replicas.
    const run = async () => handlers[task.op as K](task, timings, notes);
    const value = await run().catch((error: unknown) => (primaryLost?.(error) ? run() : Promise.reject(error)));
    const reply: PoolReply<K> = {
      ok: true, value,
      ...(Object.keys(timings).length > 0 ? { timings } : {}),
      ...(notes.readSide ? { readSide: notes.readSide } : {}),
      ...(notes.replicaFailure ? { replicaFailure: notes.replicaFailure } : {}),
      ...(notes.recoveryConflict ? { recoveryConflict: true } : {}),
      ...(notes.primaryFailure ? { primaryFailure: notes.primaryFailure } : {}),
      ...(notes.codesWanted ? { codesWanted: true } : {}),
    };
    // Inside the try: a handler resolving null or a primitive must come back as a wire error,
    // not escape as a raw Piscina rejection.
    const answer = (value as { answer?: unknown } | null)?.answer;
    if (!(answer instanceof Uint8Array)) return reply;
    return move({ [transferableSymbol]: [answer.buffer], [valueSymbol]: reply });
  } catch (error) {
    return { ok: false, error: toWireError(error) };
  }
}
