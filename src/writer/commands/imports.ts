// Bulk writes (docs/time.md): a whole past conversation in one command — the episode, every turn
// with its own time, its end and what extraction made of it, in the flush's one transaction —
// and a batch of facts, each through remember's rule (de-duplication, supersession) in order.
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';
import { appendTurn, startEpisode, storeExtracted } from './episodes.js';
import { rememberRow, storedFact } from './remember.js';
import { isoWithOffset } from '../../shared/text.js';

export function* importEpisode(cmd: CommandOf<'importEpisode'>, ctx: RuleContext): Step<WriterResults['importEpisode']> {
  const { episode_id: episodeId } = yield* startEpisode({ type: 'startEpisode', participants: cmd.participants, startedAt: cmd.startedAt }, ctx);
  const participants = yield* ctx.rows.participants(episodeId);
  const now = ctx.now();
  const startedAt = cmd.startedAt ?? now;
  let previous = '';
  // A message without a time was said when the one before it was, the first when the conversation
  // started: an imported past conversation is not dated today, and its turns stay in order in time.
  let said = startedAt;
  for (const [seq, message] of cmd.messages.entries()) {
    said = message.occurredAt ?? said;
    yield* appendTurn(ctx, episodeId, participants, {
      seq, role: message.role, content: message.content, context: previous, occurredAt: said,
    });
    previous = message.content;
  }
  yield* ctx.rows.endEpisode(episodeId, now, cmd.outcome);
  let created = 0;
  for (const memory of cmd.memories) if (yield* storeExtracted(ctx, episodeId, memory, startedAt)) created++;
  return { episode_id: episodeId, memories_created: created };
}

/**
 * Each fact through remember's rule, in order. A later item can change what an earlier one
 * stored — supersede it, or raise its confidence by saying it again — so every answer reports
 * its memory as it stands after the whole batch, as a read after the call would find it.
 */
export function* rememberBatch(cmd: CommandOf<'rememberBatch'>, ctx: RuleContext): Step<WriterResults['rememberBatch']> {
  const stored: WriterResults['rememberBatch'] = [];
  /** The answers given so far, by memory id (a fact said twice has two). */
  const answers = new Map<string, WriterResults['remember'][]>();
  for (const fact of cmd.facts) {
    const row = yield* rememberRow({ type: 'remember', ...fact }, ctx);
    for (const id of row.superseded) {
      for (const earlier of answers.get(id) ?? []) Object.assign(earlier, { valid_until: isoWithOffset(row.occurred_at), superseded_by: row.id });
    }
    if (!row.created) for (const earlier of answers.get(row.id) ?? []) earlier.confidence = row.confidence;
    const answer = storedFact(row);
    answers.set(row.id, [...(answers.get(row.id) ?? []), answer]);
    stored.push(answer);
  }
  return stored;
}
