// Closing the pool's storage connections before its threads are terminated. Piscina's destroy()
// terminates each thread, which drops its sockets: PostgreSQL then sees a connection vanish
// (EOF, an in-flight read's transaction aborted) rather than a client that said goodbye, and a
// pooler in between (pgbouncer) keeps its server connection busy until it notices. Piscina has
// no per-thread teardown hook and cannot address a task to a given thread, so the main thread
// broadcasts "close" on a channel named for this pool, each thread closes its read port
// (sql.end({timeout}): in-flight queries get that long, then a Terminate message) and answers
// "closed"; the pool is destroyed once every thread answered, or after a bound. An idle thread
// hears the request only if its event loop runs between tasks: the PostgreSQL pool's threads do
// not block in Atomics.wait (core/pool/read-pool.ts).
import { BroadcastChannel } from 'node:worker_threads';

type PoolCloseMessage = { type: 'close' } | { type: 'closed' };

/** Longest the main thread waits for the threads to close their connections. */
export const POOL_CLOSE_WAIT_MS = 3_000;

/** Thread side: runs `close` (once) when the pool asks, then answers. */
export function closeWhenAsked(channelName: string, close: () => Promise<void>): void {
  const channel = new BroadcastChannel(channelName);
  // Never what keeps a thread alive.
  channel.unref();
  let closing: Promise<void> | null = null;
  channel.onmessage = (event) => {
    if ((event.data as PoolCloseMessage | null)?.type !== 'close') return;
    closing ??= close().catch(() => {});
    void closing.then(() => channel.postMessage({ type: 'closed' } satisfies PoolCloseMessage));
  };
}

/** Main side: asks every thread to close its connections; resolves with how many answered. */
export function askThreadsToClose(channelName: string, threads: number, waitMs = POOL_CLOSE_WAIT_MS): Promise<number> {
  const channel = new BroadcastChannel(channelName);
  let answered = 0;
  return new Promise<number>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      channel.close();
      resolve(answered);
    };
    const timer = setTimeout(done, waitMs);
    channel.onmessage = (event) => {
      if ((event.data as PoolCloseMessage | null)?.type === 'closed' && ++answered >= threads) done();
    };
    channel.postMessage({ type: 'close' } satisfies PoolCloseMessage);
  });
}
