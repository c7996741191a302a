// Recalled memories are reinforced (FSRS review) through the writer, but never on the
// response path: ids are collected and sent as one command every FLUSH_MS, so a burst of
// recalls costs one small transaction instead of one per request.
import type { Logger } from '../shared/logger.js';
import type { WriterClient } from './writer-client.js';

const FLUSH_MS = 250;
const MAX_PENDING = 5_000;

export class Reinforcer {
  private pending = new Set<number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly writer: WriterClient, private readonly log: Logger) {}

  record(rowids: number[]): void {
    for (const rowid of rowids) this.pending.add(rowid);
    if (this.pending.size >= MAX_PENDING) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.size === 0) return;
    const rowids = [...this.pending];
    this.pending = new Set();
    try {
      await this.writer.send({ type: 'reinforce', rowids, at: Date.now() });
    } catch (error) {
      // Losing a reinforcement only makes a memory decay a little faster: log, do not fail.
      this.log.warn({ reason: (error as Error).message }, 'reinforcement failed');
    }
  }
}
