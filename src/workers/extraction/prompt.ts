// The extraction prompt (documented verbatim in README "Extraction"). The transcript goes in
// ONE user message as labelled text, not as chat turns: replayed as turns, a chat model would
// continue the conversation instead of analysing it.
import type { Outcome } from '../../shared/schemas.js';
import type { TranscriptTurn } from './rules.js';

/** Longer transcripts keep their most recent turns: what was settled last matters most. */
export const MAX_TRANSCRIPT_CHARS = 24_000;

export const SYSTEM_PROMPT = `You extract long-term memories from a conversation between a user and an AI agent.
Return ONLY a JSON object of this exact shape:
{"memories":[{"content":"...","memory_type":"semantic","confidence":0.9}]}

Rules:
- "semantic": a durable fact about the subject: preferences, identity, location, job, possessions, relationships, allergies and health, plans.
- "procedural": how to do something: steps, instructions, a method or fix that was used, what worked or failed.
- Write each memory as one standalone sentence in the third person that names the subject (e.g. "Alice is allergic to peanuts"), never "I" or "you".
- Only what the conversation states or clearly confirms; do not guess. Skip greetings, small talk and questions.
- The agent's suggestions are not facts about the subject unless the subject accepts them.
- confidence is a number from 0 to 1: how sure the conversation makes the memory.
- No duplicates. If there is nothing worth remembering, return {"memories":[]}.`;

export interface PromptInput {
  subject: string;
  participants: string[];
  outcome: Outcome | null;
  turns: TranscriptTurn[];
}

/** The user message: who the memories are about, then the transcript, one "[role] text" line per turn. */
export function userMessage(input: PromptInput): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = input.turns.length - 1; i >= 0; i--) {
    const line = `[${input.turns[i].role}] ${input.turns[i].content.replace(/\s*\n\s*/g, ' ')}`;
    if (size + line.length > MAX_TRANSCRIPT_CHARS && lines.length > 0) break;
    lines.unshift(line);
    size += line.length + 1;
  }
  return [
    `Subject: ${input.subject}`,
    `Participants: ${input.participants.join(', ')}`,
    `Outcome: ${input.outcome ?? 'unknown'}`,
    '',
    'Transcript:',
    ...lines,
  ].join('\n');
}
