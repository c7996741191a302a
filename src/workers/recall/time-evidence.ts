// "When did …" questions. A query that asks for a time ("when did Ana move?", "what year was
// that?", "how long ago …") is answered by a memory that says when: in conversations the turn
// that holds the answer usually carries a date expression ("last Saturday", "in May 2023", "two
// weeks ago"), while most turns carry none. The question itself names no window — query-time.ts
// has nothing to filter on — so here the best candidates whose text holds a date expression
// (chrono-node, the parser query-time.ts reads queries with) gain a fixed bonus. Nothing is
// stored for it: the text is read at recall time, only for time questions and only over the
// best few candidates, and what was found is remembered per memory id (a memory's content never
// changes), so a memory is parsed once per pool thread while it stays in the memo.
import * as chrono from 'chrono-node';

/**
 * The question forms of English that ask for a time: "when" as an interrogative (followed by an
 * auxiliary: "when did", "when is", "when's" — a subordinate "when she was in Paris" is not one),
 * "what/which date, day, week, month, year, time", "how long ago", "since when".
 */
const ASKS_FOR_TIME = new RegExp([
  String.raw`\bwhen(?:'s|\s+(?:did|does|do|is|was|were|are|am|will|would|has|have|had|can|could|should|shall|might|must))\b`,
  String.raw`\b(?:what|which)\s+(?:date|day|week|month|year|time|season)s?\b`,
  String.raw`\bhow\s+long\s+ago\b`,
  String.raw`\bsince\s+when\b`,
].join('|'), 'i');

/** Whether the query asks for a time (a question form, not a window: see query-time.ts for those). */
export function asksForTime(query: string): boolean {
  return ASKS_FOR_TIME.test(query);
}

/**
 * Only the start of a long memory is read: a date expression that says when sits near its
 * start in a turn or a fact, and parsing 100,000 characters would cost a recall ~100 ms.
 */
const READ_CHARS = 2_000;

/** Memo of what was found per memory id; bounded, oldest entries leave first. */
const MEMO_LIMIT = 50_000;
const memo = new Map<string, boolean>();

/** Whether the memory's text holds a date expression chrono-node reads ("yesterday", "May 2023", "last week"). */
export function saysWhen(id: string, content: string): boolean {
  const known = memo.get(id);
  if (known !== undefined) return known;
  const found = chrono.parse(content.length > READ_CHARS ? content.slice(0, READ_CHARS) : content).length > 0;
  if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value as string);
  memo.set(id, found);
  return found;
}

/** The bonus each memory gains: weight when its text says when, none otherwise. */
export function timeEvidence(rows: Iterable<{ rowid: number; id: string; content: string }>, weight: number): Map<number, number> {
  const bonus = new Map<number, number>();
  if (weight <= 0) return bonus;
  for (const row of rows) if (saysWhen(row.id, row.content)) bonus.set(row.rowid, weight);
  return bonus;
}
