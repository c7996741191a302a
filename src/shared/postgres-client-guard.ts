// Containment of one known failure of the `postgres` client (3.4.9, porsager/postgres#1154,
// #1208; fixes proposed in #1168, #1209, none released). When a connection's socket closes while
// the connection is still in use — a transaction whose server went away between two statements
// (sql.begin then runs ROLLBACK on it), a reserved connection's next query — the client queues the
// write with setImmediate and, when it runs, calls `socket.write` on the null socket. The
// TypeError is thrown from the immediate, out of every caller's reach: an uncaught exception
// that ends the thread (the writer's, a pool thread's) or the process. The client object is
// also spoiled for good: the failed write stays buffered, so the connection's next start-up
// message is never sent, and the query that was being sent never settles.
//
// So each thread that uses the client installs this guard once. It recognises that exception
// alone — a TypeError with exactly that message, thrown by `nextWrite` in the client's
// connection.js — and replaces the clients that lost a connection (replaceable-sql.ts), which
// ends the spoiled one and rejects its hung query with CONNECTION_DESTROYED (a connection
// failure the caller handles). Every other uncaught exception is thrown again, one tick later,
// with the guard removed: the thread or process then ends exactly as it would have without it.

const MESSAGE = "Cannot read properties of null (reading 'write')";
/** The client's connection module, as Node names it in a stack (ESM and CommonJS builds). */
const CLIENT_FRAME = /^\s+at (?:Immediate\.)?nextWrite \(.*[/\\]postgres[/\\](?:cjs[/\\])?src[/\\]connection\.js:\d+:\d+\)$/;

/** The client's null-socket write, and nothing else. */
export function isNullSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError) || error.message !== MESSAGE) return false;
  const [, top] = (error.stack ?? '').split('\n');
  return top !== undefined && CLIENT_FRAME.test(top);
}

/** A client the guard can replace: it says whether it lost a connection since it was made. */
export interface GuardedClient {
  readonly lostConnection: boolean;
  /** Its sessions hold nothing between queries (reads): replacing it loses nothing but connections. */
  readonly stateless: boolean;
  replace(reason: string): void;
}

const clients = new Set<GuardedClient>();
let installed: ((error: Error) => void) | null = null;
let caught = 0;

/** Clients to replace when the failure is seen; `forget` when a client ends. */
export function guardClient(client: GuardedClient): void {
  clients.add(client);
  installGuard();
}

export function forgetClient(client: GuardedClient): void {
  clients.delete(client);
}

/** How often the guard caught the client's failure in this thread (tests, logs). */
export function nullSocketWritesCaught(): number {
  return caught;
}

function installGuard(): void {
  if (installed) return;
  installed = (error: Error) => {
    if (!isNullSocketWrite(error)) {
      // Not ours: as if no listener had been installed (the default report, the thread's or
      // the process's end, a worker's 'error' event in its parent).
      process.off('uncaughtException', installed!);
      installed = null;
      process.nextTick(() => { throw error; });
      return;
    }
    caught++;
    // The failing connection is one that closed; which client owns it the stack cannot tell, so
    // every client that lost a connection is replaced. The client does not report every close
    // (one that closes while connecting reconnects without a word), so should none say so, the
    // stateless ones (reads) are replaced; one holding session state (advisory locks) is left.
    const lost = [...clients].filter((client) => client.lostConnection);
    for (const client of lost.length > 0 ? lost : [...clients].filter((c) => c.stateless)) {
      // An exception thrown inside this listener would end the thread at once: ending the old
      // client can meet the same broken connection (the same write, reached synchronously).
      try {
        client.replace('the postgres client failed writing to a closed connection');
      } catch (failure) {
        if (!isNullSocketWrite(failure)) process.nextTick(() => { throw failure; });
      }
    }
  };
  process.on('uncaughtException', installed);
}
