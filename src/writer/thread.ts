// The writer thread: the only read-write connection to the database.
//
// Group commit: commands that arrive while the thread is busy are queued; each flush runs
// the whole queue inside ONE transaction (`BEGIN IMMEDIATE` on SQLite), each command in its own
// savepoint so one bad command cannot undo its neighbours, and replies only after COMMIT
// returns. With synchronous=FULL, one fsync then acknowledges many writes. The storage is
// behind the store port (store-port.ts); an asynchronous adapter's flushes run one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../shared/config.js';
import { toWireError } from '../shared/errors.js';
import type { WriterBatchReport, WriterDatabaseState, WriterReady, WriterReply, WriterRequest, WriterStartFailed } from '../shared/protocol/writer.js';
import { openSqliteWriteStore } from './sqlite/adapter.js';
import { openPostgresWriteStore } from './postgres/adapter.js';
import type { BatchOutcome, WriteStorePort } from './commands/store-port.js';
import { lowerThreadPriorityBy, nameThread } from '../shared/os-thread.js';

/** Upper bound on commands per transaction, so one huge burst cannot hold the lock for long. */
const MAX_BATCH = 512;
/**
 * How far below the process's own priority the writer runs: when it and recall want a core,
 * the kernel runs the recall a client is waiting on and the writer's queue grows instead (the
 * next group commit takes it all at once). Relative, so a service started under `nice` keeps
 * the order. Not SCHED_IDLE like the background lane: under a steady recall load writes would
 * then never commit. Measured with bench:mixed (README, "Recall under load").
 */
const WRITER_NICE_STEP = 10;

export type WriterControl = { type: 'close' };

const port = parentPort!;
const config = workerData.config as Config;
nameThread('mr-writer');
// Reported in the ready message: the main thread logs a failure once.
const priority = lowerThreadPriorityBy(WRITER_NICE_STEP);

/**
 * Opens and migrates the store. A failure is posted as a message: an error thrown here reaches
 * the main thread without its message (SqliteError does not survive the thread boundary).
 */
async function open(): Promise<WriteStorePort> {
  try {
    return config.postgres
      ? await openPostgresWriteStore(config.postgres.url, config, undefined, (available) => port.postMessage({ type: 'database', available } satisfies WriterDatabaseState))
      : openSqliteWriteStore(config);
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    port.postMessage({ type: 'startFailed', code: code ?? 'UNKNOWN', message: message ?? String(error) } satisfies WriterStartFailed);
    // Ends this thread only; the main thread reports the failure it was just sent.
    process.exit(1);
  }
}

const store = await open();

const queue: WriterRequest[] = [];
let flushScheduled = false;
let closing = false;

/** An asynchronous flush is in progress: the next one waits for it (one transaction at a time). */
let flushing = false;

function flush(): void {
  flushScheduled = false;
  const batch = queue.splice(0, MAX_BATCH);
  if (batch.length === 0) return afterFlush();
  const started = performance.now();
  let outcome: BatchOutcome | Promise<BatchOutcome>;
  try {
    outcome = store.runBatch(batch);
  } catch (error) {
    outcome = failedBatch(batch, error);
  }
  if (!(outcome instanceof Promise)) return finish(batch, outcome, started);
  flushing = true;
  outcome.then((done) => finish(batch, done, started), (error) => finish(batch, failedBatch(batch, error), started));
}

/** COMMIT itself failed (disk full, I/O error, connection lost): nothing in the batch was stored. */
function failedBatch(batch: WriterRequest[], error: unknown): BatchOutcome {
  const wire = toWireError(error);
  return { replies: batch.map((request): WriterReply => ({ id: request.id, ok: false, error: wire })) };
}

function finish(batch: WriterRequest[], outcome: BatchOutcome, started: number): void {
  flushing = false;
  // The report first: whoever sees an acknowledgement then also sees its batch counted.
  const report: WriterBatchReport = { type: 'batch', commands: batch.length, commitMs: performance.now() - started };
  if (outcome.position !== undefined) report.position = outcome.position;
  port.postMessage(report);
  // Each acknowledgement carries its own batch's position: the answer to that write names it.
  const { position } = outcome;
  for (const reply of outcome.replies) {
    if (reply.ok && typeof position === 'string') reply.position = position;
    port.postMessage(reply);
  }
  afterFlush();
}

function afterFlush(): void {
  if (queue.length > 0) schedule();
  else if (closing) void shutDown();
}

function schedule(): void {
  if (flushScheduled || flushing) return;
  flushScheduled = true;
  // setImmediate lets every message already delivered to this thread join the batch.
  setImmediate(flush);
}

async function shutDown(): Promise<void> {
  await store.close();
  port.close();
}

port.on('message', (message: WriterRequest | WriterControl) => {
  if ('type' in message && message.type === 'close') {
    closing = true;
    if (!flushScheduled && !flushing && queue.length === 0) void shutDown();
    return;
  }
  queue.push(message as WriterRequest);
  schedule();
});

port.postMessage({ type: 'ready', namespaceId: store.namespaceId, priority } satisfies WriterReady);
