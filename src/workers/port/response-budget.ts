// The response budget (SERVICE_MAX_RESPONSE_BYTES). Facts may be 100,000 characters and
// `limit` up to 1000, so one recall or inspect could answer ~100 MB — and 16 at once take
// gigabytes while the result is built, copied across the thread, serialised and sent. The
// worker therefore keeps memories in rank order only while their estimated JSON size fits the
// budget; the answer keeps the spec's shape and says it was cut (X-Result-Truncated on REST,
// a note in the MCP text content). The first memory is always kept.

/**
 * Bytes of JSON around one memory's content: keys, id, type, scores, and its times, role,
 * episode and supersession fields (~430 bytes when all are set).
 */
const PER_MEMORY_OVERHEAD = 448;

export interface Budgeted<T> {
  kept: T[];
  truncated: boolean;
}

/**
 * Keeps items in order while their estimated JSON fits the budget (the first always fits).
 * `extraBytes`: what else an item carries into the answer beyond its content (a recall's
 * `explain` adds ~600 bytes a memory, more than many facts).
 */
export class ResponseBudget<T> {
  private readonly kept: T[] = [];
  private used = 0;
  private truncated = false;

  constructor(
    private readonly content: (item: T) => string,
    private readonly budgetBytes: number,
    private readonly extraBytes: (item: T) => number = () => 0,
  ) {}

  /** Keeps the item if it fits; false (and nothing kept) once the budget is spent. */
  take(item: T): boolean {
    // As serialised: escapes make a control character 6 bytes and a quote 2, so the raw length
    // alone let an answer of such content run ~6× over the budget.
    this.used += Buffer.byteLength(JSON.stringify(this.content(item))) + PER_MEMORY_OVERHEAD + this.extraBytes(item);
    if (this.used > this.budgetBytes && this.kept.length > 0) {
      this.truncated = true;
      return false;
    }
    this.kept.push(item);
    return true;
  }

  result(): Budgeted<T> {
    return { kept: this.kept, truncated: this.truncated };
  }
}

/** `items` may be a lazy iterator: it is not read past the budget. */
export function withinBudget<T>(
  items: Iterable<T>,
  content: (item: T) => string,
  budgetBytes: number,
  extraBytes: (item: T) => number = () => 0,
): Budgeted<T> {
  const budget = new ResponseBudget(content, budgetBytes, extraBytes);
  for (const item of items) if (!budget.take(item)) break; // `break` closes the iterator
  return budget.result();
}
