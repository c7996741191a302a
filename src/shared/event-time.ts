// Event times (issue 26): when something was said or became true, as the client gives it —
// ISO 8601 with a UTC offset ("2023-05-08T13:56:00+02:00", "…Z") — held as epoch milliseconds.
// The schema's pattern refuses other shapes (400 naming the field); this refuses dates the
// pattern lets through but the calendar does not have (February 30th), which Date.parse would
// silently roll into March.
import { fail } from './errors.js';

/** Date, time to the minute (seconds and fraction optional), and an offset: Z, ±hh:mm or ±hhmm. */
export const EVENT_TIME_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]([01]\\d|2[0-3]):?[0-5]\\d)$';

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Milliseconds since the epoch of a pattern-checked time; a day the month lacks is a 400 naming `field`. */
export function eventTimeMs(field: string, text: string): number {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || day > (month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1]!)) {
    throw fail.invalidField(field, 'not a calendar date and time (ISO 8601 with offset, e.g. 2023-05-08T13:56:00+02:00)');
  }
  // Times before 1970 are not stored: every time column is non-negative milliseconds.
  if (ms < 0) throw fail.invalidField(field, 'must be 1970 or later');
  return ms;
}

/** The optional field's milliseconds, or `fallback` when it was not sent. */
export function eventTimeOr(field: string, text: string | undefined, fallback: number): number {
  return text === undefined ? fallback : eventTimeMs(field, text);
}

/** Recall's view of time: valid at `validAt`, occurred within [since, until] (ms). */
export interface TimeFilter {
  validAt: number;
  /** as_of was given: memories that occurred after it are left out too. */
  asOf: boolean;
  /** Superseded facts too (include_superseded). */
  allVersions: boolean;
  since: number | null;
  until: number | null;
  /**
   * The time the query text speaks of (workers/recall/query-time.ts): memories of that time —
   * a turn said in it, a fact valid at some moment of it, superseded or not.
   */
  during?: TimeWindow | null;
}

/** A closed interval of epoch milliseconds. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** The time fields of a recall or recall_grouped body. */
export interface RecallTimeInput {
  as_of?: string;
  include_superseded: boolean;
  since?: string;
  until?: string;
}

/** A recall's time filter (400 naming the field for a date the calendar lacks). */
export function recallTime(input: RecallTimeInput, now: number): TimeFilter {
  const since = input.since === undefined ? null : eventTimeMs('since', input.since);
  const until = input.until === undefined ? null : eventTimeMs('until', input.until);
  // An empty window is a client's mistake, not a question with no answer.
  if (since !== null && until !== null && since > until) throw fail.invalidField('since', 'must not be later than until');
  return {
    validAt: eventTimeOr('as_of', input.as_of, now),
    asOf: input.as_of !== undefined,
    allVersions: input.include_superseded,
    since,
    until,
  };
}

/** The optional field's milliseconds, or undefined when it was not sent (the writer then uses now). */
export function optionalTime(field: string, text: string | undefined): number | undefined {
  return text === undefined ? undefined : eventTimeMs(field, text);
}
