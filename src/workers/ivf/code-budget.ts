// The memory a pool thread may hold in vector codes, over every namespace it reads: a
// namespace's codes are loaded only within the budget, and the least recently used ones are
// dropped to make room. Each thread has its own budget (and its own codes: nothing is shared
// between threads or namespaces).

/** A namespace's codes as the budget sees them: what they hold, and how to let them go. */
export interface BudgetedCodes {
  readonly bytes: number;
  /** Drops the codes (the namespace falls back to vec0 until it loads them again). */
  release(): void;
}

export class CodeBudget {
  /** Most recently used last. */
  private readonly held = new Map<BudgetedCodes, true>();

  constructor(readonly limitBytes: number) {}

  /** Bytes held now by every namespace's codes in this thread. */
  get usedBytes(): number {
    let total = 0;
    for (const codes of this.held.keys()) total += codes.bytes;
    return total;
  }

  /**
   * Whether codes of `bytes` may be held by `owner` (other namespaces' codes dropped, least
   * recently used first, to make room). False when they would not fit even alone.
   */
  admit(owner: BudgetedCodes, bytes: number): boolean {
    this.held.delete(owner);
    if (bytes > this.limitBytes) return false;
    for (const other of this.held.keys()) {
      if (this.usedBytes + bytes <= this.limitBytes) break;
      this.held.delete(other);
      other.release();
    }
    this.held.set(owner, true);
    return true;
  }

  /** Marks `owner` as just used (last to be dropped). */
  touch(owner: BudgetedCodes): void {
    if (this.held.delete(owner)) this.held.set(owner, true);
  }

  forget(owner: BudgetedCodes): void {
    this.held.delete(owner);
  }
}
