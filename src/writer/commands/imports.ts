// Bulk writes (docs/time.md): a whole past conversation in one command — the episode, every turn
// with its own time, its end and what extraction made of it, in the flush's one transaction —
// and a batch of facts, each through remember's rule (de-duplication, supersession) in order.
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';
import { appendTurn, startEpisode, storeExtracted } from './episodes.js';
import { remember } from './remember.js';

export function* importEpisode(cmd: CommandOf<'importEpisode'>, ctx: RuleContext): Step<WriterResults['importEpisode']> {
  const { episode_id: episodeId } = yield* startEpisode({ type: 'startEpisode', participants: cmd.participants, startedAt: cmd.startedAt }, ctx);
  const participants = yield* ctx.rows.participants(episodeId);
  const now = ctx.now();
  const startedAt = cmd.startedAt ?? now;
  let previous = '';
  for (const [seq, message] of cmd.messages.entries()) {
    yield* appendTurn(ctx, episodeId, participants, {
      seq, role: message.role, content: message.content, context: previous, occurredAt: message.occurredAt ?? now,
    });
    previous = message.content;
  }
  yield* ctx.rows.endEpisode(episodeId, now, cmd.outcome);
  let created = 0;
  for (const memory of cmd.memories) if (yield* storeExtracted(ctx, episodeId, memory, startedAt)) created++;
  return { episode_id: episodeId, memories_created: created };
}

export function* rememberBatch(cmd: CommandOf<'rememberBatch'>, ctx: RuleContext): Step<WriterResults['rememberBatch']> {
  const stored: WriterResults['rememberBatch'] = [];
  for (const fact of cmd.facts) stored.push(yield* remember({ type: 'remember', ...fact }, ctx));
  return stored;
}
