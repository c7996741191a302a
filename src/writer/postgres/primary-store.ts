// The PostgreSQL store as the writer thread sees it through a failover: each flush first makes
// sure of a primary (primary.ts), and a flush that lost its connection or met a standby fails
// as DATABASE_UNAVAILABLE (503, Retry-After) — nothing of it was acknowledged — and leaves the
// next flush a new connection to check.
import { fail } from '../../shared/errors.js';
import type { WriterRequest } from '../../shared/protocol/writer.js';
import type { BatchOutcome, WriteStorePort } from '../commands/store-port.js';
import { lostPrimary, type PrimaryConnection } from './primary.js';

export class PrimaryWriteStore implements WriteStorePort {
  constructor(private readonly store: WriteStorePort, private readonly primary: PrimaryConnection) {}

  get namespaceId(): number {
    return this.store.namespaceId;
  }

  get namespace(): string {
    return this.store.namespace;
  }

  async runBatch(batch: WriterRequest[]): Promise<BatchOutcome> {
    await this.primary.ready();
    try {
      return await this.store.runBatch(batch);
    } catch (error) {
      if (!lostPrimary(error)) throw error;
      this.primary.lost(error);
      throw fail.databaseUnavailable();
    }
  }

  async close(): Promise<void> {
    await this.primary.close();
  }
}
