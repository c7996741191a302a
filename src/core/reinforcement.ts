// Recalled memories are reinforced (FSRS review) through the writer, but never on the
// response path: ids are collected and sent as one command every FLUSH_MS, so a burst of
// recalls costs one small transaction instead of one per request.
import type { Logger } from '../shared/logger.js';
import type { WriterClient } from './writer-client.js';

const FLUSH_MS = 250;
const MAX_PENDING = 5_000;

export class Reinforcer {
  /** Rowids recalled, by the namespace they were recalled in (each namespace's go in its own command). */
  private pending = new Map<string, Set<number>>();
  private count = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly writer: WriterClient, private readonly log: Logger) {}

  record(namespace: string, rowids: number[]): void {
    if (rowids.length === 0) return;
    let set = this.pending.get(namespace);
    if (!set) this.pending.set(namespace, (set = new Set()));
    for (const rowid of rowids) set.add(rowid);
    this.count += rowids.length;
    if (this.count >= MAX_PENDING) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.size === 0) return;
    const pending = this.pending;
    this.pending = new Map();
    this.count = 0;
    await Promise.all([...pending].map(async ([namespace, rowids]) => {
      try {
        await this.writer.send(namespace, { type: 'reinforce', rowids: [...rowids], at: Date.now() });
      } catch (error) {
        // Losing a reinforcement only makes a memory decay a little faster: log, do not fail.
        this.log.warn({ reason: (error as Error).message }, 'reinforcement failed');
      }
    }));
  }
}
