// A query that speaks of a time ("what did we decide last week?", "where did Ana live in May
// 2023", "yesterday") is about the memories of that time (issue 26, docs/time.md). The date
// expression is read by chrono-node, relative to the recall's as_of (or now), and becomes a
// window: as wide as the least precise part the text gave — the day, the week when it speaks of
// weeks, the month, the year — or the range it named ("from May 3 to May 9 2023"). An expression
// that fixes no part of a date ("in the morning") is no window, nor is one that names a moment
// to the hour ("now", "at 5pm"): a moment's view is as_of's (valid then), not a period's.
import * as chrono from 'chrono-node';
import type { TimeWindow } from '../../shared/event-time.js';

type Unit = 'day' | 'week' | 'month' | 'year';

const DAY_MS = 86_400_000;

/** The window the query's first date expression names, or null when it names none. */
export function queryWindow(query: string, reference: number): TimeWindow | null {
  const [found] = chrono.parse(query, new Date(reference));
  if (!found || found.start.isCertain('hour')) return null;
  const unit = unitOf(found.start, found.text);
  if (unit === null) return null;
  const from = startOf(unit, found.start.date());
  const last = found.end ? found.end.date() : found.start.date();
  const to = endOf(found.end ? unitOf(found.end, found.text) ?? unit : unit, last);
  return to >= from ? { from, to } : null;
}

/** The least precise part the expression fixed (chrono's certain components). */
function unitOf(components: chrono.ParsedComponents, text: string): Unit | null {
  // "last week", "two weeks ago": chrono answers a day; the text asked for its week.
  if (/\bweeks?\b/i.test(text)) return 'week';
  if (components.isCertain('day') || components.isCertain('weekday')) return 'day';
  if (components.isCertain('month')) return 'month';
  if (components.isCertain('year')) return 'year';
  return null;
}

/** The first millisecond (UTC) of the day, week (from Monday), month or year holding `date`. */
function startOf(unit: Unit, date: Date): number {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  const day = Date.UTC(y, m, date.getUTCDate());
  switch (unit) {
    case 'day': return day;
    case 'week': return day - ((date.getUTCDay() + 6) % 7) * DAY_MS;
    case 'month': return Date.UTC(y, m, 1);
    case 'year': return Date.UTC(y, 0, 1);
  }
}

/** The last millisecond (UTC) of the day, week, month or year holding `date`. */
function endOf(unit: Unit, date: Date): number {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  switch (unit) {
    case 'day': return startOf('day', date) + DAY_MS - 1;
    case 'week': return startOf('week', date) + 7 * DAY_MS - 1;
    case 'month': return Date.UTC(y, m + 1, 1) - 1;
    case 'year': return Date.UTC(y + 1, 0, 1) - 1;
  }
}
