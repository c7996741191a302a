// The reference extraction: LoCoMo's per-session "observation" facts about each speaker
// (`observation.session_N_observation`), human-checked, each with the turn it came from. Read at
// run time from the data folder the recall-quality bench uses; nothing of its text is written
// anywhere, only aggregate figures are printed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { locomoPath } from '../recall-quality/locomo-data.js';

export interface ReferenceSession {
  conversation: string;
  speakers: [string, string];
  turns: { speaker: string; text: string }[];
  observations: string[];
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  observation?: Record<string, Record<string, [string, string][]>>;
}

/** Every session that has both turns and observations, in conversation order; null without the data set. */
export function loadReference(dir = locomoPath()): ReferenceSession[] | null {
  const file = join(dir, 'locomo-dev.json');
  if (!existsSync(file)) return null;
  const samples = JSON.parse(readFileSync(file, 'utf8')) as RawSample[];
  const sessions: ReferenceSession[] = [];
  for (const sample of samples) {
    const c = sample.conversation;
    const speakers: [string, string] = [String(c.speaker_a), String(c.speaker_b)];
    const keys = Object.keys(c).filter((k) => /^session_\d+$/.test(k) && Array.isArray(c[k]))
      .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));
    for (const key of keys) {
      const turns = (c[key] as { speaker: string; text: string }[]).map((t) => ({ speaker: String(t.speaker), text: String(t.text) }));
      const observed = sample.observation?.[`${key}_observation`] ?? {};
      const observations = Object.values(observed).flatMap((facts) => facts.map((f) => String(f[0])));
      if (turns.length > 0 && observations.length > 0) sessions.push({ conversation: sample.sample_id, speakers, turns, observations });
    }
  }
  return sessions;
}
