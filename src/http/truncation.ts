// Which results were cut to the response budget (see workers/response-budget.ts). The flag
// travels beside the result rather than in it, so the JSON keeps exactly the spec's shape:
// REST answers carry it as a header, MCP tool results as a note in their text content.
const truncated = new WeakSet<object>();

export const TRUNCATED_HEADER = 'X-Result-Truncated';

export function markTruncated<T extends object>(result: T, wasTruncated: boolean): T {
  if (wasTruncated) truncated.add(result);
  return result;
}

export function isTruncated(result: unknown): boolean {
  return typeof result === 'object' && result !== null && truncated.has(result);
}
