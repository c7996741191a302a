// Recall ranks a memory by every signal only once the embedding backfill has attached its vector,
// which happens after the write answered. A test that compares rankings (two recalls in a row, or
// an exact order) before then ranks by the lexical signals alone — a ranking users get only for
// a moment — and a vector attached between its two recalls changes the order under it (a flaky
// test on a loaded machine). Such a test waits here first.
import type { RunningService } from '../../src/service.js';

/**
 * Resolves once no memory of any namespace waits for its vector: the backfill ran out of work
 * and the store agrees (a write it was not told of, e.g. another process's, starts another run).
 */
export async function untilEmbedded(service: RunningService): Promise<void> {
  for (;;) {
    await service.backfill.idle();
    const { names } = await service.pool.run({ op: 'pendingNamespaces', namespace: service.config.namespace });
    if (names.length === 0) return;
    service.backfill.poke();
  }
}
