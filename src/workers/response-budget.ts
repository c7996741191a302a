// The response budget (SERVICE_MAX_RESPONSE_BYTES). Facts may be 100,000 characters and
// `limit` up to 1000, so one recall or inspect could answer ~100 MB — and 16 at once take
// gigabytes while the result is built, copied across the thread, serialised and sent. The
// worker therefore keeps memories in rank order only while their estimated JSON size fits the
// budget; the answer keeps the spec's shape and says it was cut (X-Result-Truncated on REST,
// a note in the MCP text content). The first memory is always kept.

/** Bytes of JSON around one memory's content: keys, id, type, scores. */
const PER_MEMORY_OVERHEAD = 256;

export interface Budgeted<T> {
  kept: T[];
  truncated: boolean;
}

/**
 * `items` may be a lazy iterator (rows streamed from SQLite): it is not read past the budget.
 * `extraBytes`: what else the item carries into the answer beyond its content (a recall's
 * `explain` adds ~600 bytes a memory, more than many facts).
 */
export function withinBudget<T>(
  items: Iterable<T>,
  content: (item: T) => string,
  budgetBytes: number,
  extraBytes: (item: T) => number = () => 0,
): Budgeted<T> {
  const kept: T[] = [];
  let used = 0;
  for (const item of items) {
    // As serialised: escapes make a control character 6 bytes and a quote 2, so the raw length
    // alone let an answer of such content run ~6× over the budget.
    used += Buffer.byteLength(JSON.stringify(content(item))) + PER_MEMORY_OVERHEAD + extraBytes(item);
    if (used > budgetBytes && kept.length > 0) return { kept, truncated: true }; // `for…of` closes the iterator
    kept.push(item);
  }
  return { kept, truncated: false };
}
