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

export function withinBudget<T>(items: readonly T[], content: (item: T) => string, budgetBytes: number): Budgeted<T> {
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    used += Buffer.byteLength(content(items[i])) + PER_MEMORY_OVERHEAD;
    if (used > budgetBytes && i > 0) return { kept: items.slice(0, i), truncated: true };
  }
  return { kept: items as T[], truncated: false };
}
