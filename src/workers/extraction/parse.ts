// Reads the extractor's reply. Models wrap JSON in code fences or prose, so the outermost
// {...} is taken; each item is checked against the contract and dropped when it does not fit.
// Nothing is clamped or coerced: an out-of-range confidence means the item is not trusted.

export interface ExtractedItem {
  content: string;
  memory_type: 'semantic' | 'procedural';
  confidence: number;
}

/** Longest content kept; longer "memories" are transcripts pasted back, not facts. */
export const MAX_CONTENT_CHARS = 1_000;
/** Valid items kept from one reply; a runaway model cannot flood an entity's memory. */
export const MAX_ITEMS = 50;

export type ParsedReply =
  | { ok: true; items: ExtractedItem[]; dropped: number }
  | { ok: false; reason: string };

/** The JSON object inside `text`: fences and surrounding text removed. */
function jsonObjectIn(text: string): unknown {
  const unfenced = text.replace(/```(?:json)?/gi, '');
  const start = unfenced.indexOf('{');
  const end = unfenced.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(unfenced.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

function item(value: unknown): ExtractedItem | null {
  if (typeof value !== 'object' || value === null) return null;
  const { content, memory_type, confidence } = value as Record<string, unknown>;
  if (typeof content !== 'string') return null;
  const text = content.replace(/\s+/g, ' ').trim();
  if (text.length === 0 || text.length > MAX_CONTENT_CHARS) return null;
  if (memory_type !== 'semantic' && memory_type !== 'procedural') return null;
  if (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) return null;
  return { content: text, memory_type, confidence };
}

/**
 * `{"memories": []}` is a valid answer (nothing worth keeping). A reply whose items were ALL
 * invalid is not: it is treated as garbage, so the caller falls back to the rules.
 */
export function parseExtraction(content: string | null | undefined): ParsedReply {
  if (typeof content !== 'string' || content.trim() === '') return { ok: false, reason: 'empty reply' };
  const parsed = jsonObjectIn(content);
  if (typeof parsed !== 'object' || parsed === null) return { ok: false, reason: 'reply is not JSON' };
  const memories = (parsed as Record<string, unknown>).memories;
  if (!Array.isArray(memories)) return { ok: false, reason: 'reply has no "memories" array' };
  const items = memories.map(item).filter((i): i is ExtractedItem => i !== null);
  if (memories.length > 0 && items.length === 0) return { ok: false, reason: 'no valid memory in reply' };
  return { ok: true, items: items.slice(0, MAX_ITEMS), dropped: memories.length - Math.min(items.length, MAX_ITEMS) };
}
