// The LoCoMo development split, read at run time from ../shared/data/locomo-dev (relative to the
// repository; BENCH_LOCOMO_DIR overrides). It is CC BY-NC evaluation data: never copied into the
// repository, never shipped, and nothing derived from its text is written anywhere by the bench.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Turn {
  diaId: string;
  speaker: string;
  text: string;
}

export interface Question {
  /** Position in the conversation's question list (asking order). */
  index: number;
  text: string;
  category: 1 | 2 | 3 | 4;
  evidence: string[];
}

export interface Conversation {
  id: string;
  speakers: [string, string];
  sessions: Turn[][];
  /** Each session's date (`session_N_date_time`, read as UTC), epoch ms; null when absent or unreadable. */
  sessionDates: (number | null)[];
  questions: Question[];
}

export function locomoPath(): string {
  return process.env.BENCH_LOCOMO_DIR ?? resolve(process.cwd(), '..', 'shared', 'data', 'locomo-dev');
}

/** The conversations, or null when the data set is not on this machine. */
export function loadLocomo(dir = locomoPath()): Conversation[] | null {
  const file = join(dir, 'locomo-dev.json');
  if (!existsSync(file)) return null;
  const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
  return samples.map((sample) => {
    const c = sample.conversation;
    const sessionKeys = Object.keys(c)
      .filter((key) => /^session_\d+$/.test(key) && Array.isArray(c[key]))
      .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));
    const sessions = sessionKeys.map((key) => (c[key] as RawTurn[]).map((t) => ({ diaId: t.dia_id, speaker: t.speaker, text: t.text })));
    const turnIds = new Set(sessions.flat().map((t) => t.diaId));
    const questions = sample.qa
      .filter((qa) => qa.category >= 1 && qa.category <= 4)
      .map((qa) => ({ text: String(qa.question), category: qa.category as 1 | 2 | 3 | 4, evidence: evidenceIds(qa.evidence).filter((id) => turnIds.has(id)) }))
      .filter((qa) => qa.evidence.length > 0)
      .map((qa, index) => ({ ...qa, index }));
    const sessionDates = sessionKeys.map((key) => sessionDate(c[`${key}_date_time`]));
    return { id: sample.sample_id, speakers: [String(c.speaker_a), String(c.speaker_b)], sessions, sessionDates, questions };
  });
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → epoch ms (UTC: the data set gives no zone), or null. */
export function sessionDate(raw: unknown): number | null {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$/i.exec(String(raw ?? ''));
  const month = m ? MONTHS.indexOf(m[5].toLowerCase()) : -1;
  if (!m || month < 0) return null;
  const hour = (Number(m[1]) % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** Evidence entries are dia ids; a few list two in one string ("D8:6; D9:17"). */
const evidenceIds = (raw: string[] | undefined) => [...new Set((raw ?? []).flatMap((e) => String(e).split(/[;,]/)).map((e) => e.trim()).filter(Boolean))];

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: unknown; category: number; evidence?: string[] }[];
}
