// The writer thread: the only read-write connection to the database.
//
// Group commit: commands that arrive while the thread is busy are queued; each flush runs
// the whole queue inside ONE `BEGIN IMMEDIATE` transaction, each command in its own
// savepoint so one bad command cannot undo its neighbours, and replies only after COMMIT
// returns. With synchronous=FULL, one fsync then acknowledges many writes.
import { parentPort, workerData } from 'node:worker_threads';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../shared/config.js';
import { openDatabase, type Db } from '../shared/db.js';
import { toWireError } from '../shared/errors.js';
import type {
  CommandOf, WriterBatchReport, WriterCommandType, WriterHandlers, WriterReady, WriterReply, WriterRequest, WriterResults, WriterStartFailed,
} from '../shared/messages.js';
import { ensureNamespace, migrate } from './migrate.js';
import { WriteStore } from './store.js';
import { batchRunner } from './batch.js';
import { prepareVectorTable } from './vector-table.js';
import { embedderIdentity } from '../shared/embedder-identity.js';
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
 * Opens and migrates the file. A failure is posted as a message: an error thrown here reaches
 * the main thread without its message (SqliteError does not survive the thread boundary).
 */
function open(): { db: Db; namespaceId: number } {
  let db: Db | null = null;
  try {
    mkdirSync(dirname(config.dbPath), { recursive: true });
    db = openDatabase(config.dbPath, { readonly: false, synchronous: config.synchronous });
    migrate(db);
    prepareVectorTable(db, embedderIdentity(config), config.reembedOnChange);
    return { db, namespaceId: ensureNamespace(db, config.namespace) };
  } catch (error) {
    db?.close();
    const { code, message } = error as { code?: string; message?: string };
    port.postMessage({ type: 'startFailed', code: code ?? 'UNKNOWN', message: message ?? String(error) } satisfies WriterStartFailed);
    // Ends this thread only; the main thread reports the failure it was just sent.
    process.exit(1);
  }
}

const { db, namespaceId } = open();
const store = new WriteStore(db, config, namespaceId);

/** One handler per command (a missing one fails to compile), each returning its command's result. */
const handlers: WriterHandlers = {
  ensureEntity: (command) => store.ensureEntity(command),
  remember: (command) => store.remember(command),
  startEpisode: (command) => store.startEpisode(command),
  addMessage: (command) => store.addMessage(command),
  endEpisode: (command) => store.endEpisode(command),
  forgetBegin: (command) => store.forgetBegin(command),
  forgetEnd: (command) => store.forgetEnd(command),
  forgetRows: (command) => store.forgetRows(command),
  restoreRows: (command) => store.restoreRows(command),
  attachVectors: (command) => store.attachVectors(command),
  reinforce: (command) => store.reinforce(command),
  consolidate: (command) => store.consolidate(command),
  installVectorGeneration: (command) => store.vectorIndex.install(command),
  moveVectors: (command) => store.vectorIndex.move(command),
  retireVectorGenerations: () => store.vectorIndex.retire(),
};

function execute<K extends WriterCommandType>(command: CommandOf<K>): WriterResults[K] {
  // TypeScript does not narrow `command.type` to K by itself; the handler map's type guarantees it.
  return handlers[command.type as K](command);
}

const runBatch = batchRunner(db, execute);

const queue: WriterRequest[] = [];
let flushScheduled = false;
let closing = false;

function flush(): void {
  flushScheduled = false;
  const batch = queue.splice(0, MAX_BATCH);
  if (batch.length > 0) {
    let replies: WriterReply[];
    const started = performance.now();
    try {
      replies = runBatch.immediate(batch);
    } catch (error) {
      // COMMIT itself failed (disk full, I/O error): nothing in the batch was stored.
      const wire = toWireError(error);
      replies = batch.map((request) => ({ id: request.id, ok: false, error: wire }));
    }
    // The report first: whoever sees an acknowledgement then also sees its batch counted.
    port.postMessage({ type: 'batch', commands: batch.length, commitMs: performance.now() - started } satisfies WriterBatchReport);
    for (const reply of replies) port.postMessage(reply);
  }
  if (queue.length > 0) schedule();
  else if (closing) shutDown();
}

function schedule(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  // setImmediate lets every message already delivered to this thread join the batch.
  setImmediate(flush);
}

function shutDown(): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  port.close();
}

port.on('message', (message: WriterRequest | WriterControl) => {
  if ('type' in message && message.type === 'close') {
    closing = true;
    if (!flushScheduled && queue.length === 0) shutDown();
    return;
  }
  queue.push(message as WriterRequest);
  schedule();
});

port.postMessage({ type: 'ready', namespaceId, priority } satisfies WriterReady);
