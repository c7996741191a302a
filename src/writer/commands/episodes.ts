// Episodes: each message is stored at once as an episodic memory of its episode (recallable
// mid-conversation), with the previous turn as its context; ending one stores what extraction
// made of it, unless a delete has removed (or is removing) a turn extraction read.
import { randomUUID } from 'node:crypto';
import { fail } from '../../shared/errors.js';
import type { CommandOf, ExtractedMemory, WriterResults } from '../../shared/protocol/writer.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';
import { entity } from './entities.js';
import { insertMemory, type NewMemory } from './new-memory.js';
import { storeOwned } from './remember.js';

export function* startEpisode(cmd: CommandOf<'startEpisode'>, ctx: RuleContext): Step<WriterResults['startEpisode']> {
  const id = randomUUID();
  const now = ctx.now();
  yield* ctx.rows.insertEpisode(id, now, cmd.startedAt ?? now);
  for (const [position, name] of cmd.participants.entries()) {
    yield* ctx.rows.insertParticipant(id, (yield* entity(ctx, name)).id, position);
  }
  return { episode_id: id };
}

export function* addMessage(cmd: CommandOf<'addMessage'>, ctx: RuleContext): Step<WriterResults['addMessage']> {
  const episode = yield* ctx.rows.episode(cmd.episodeId);
  const now = ctx.now();
  if (!episode) throw fail.episodeNotFound(cmd.episodeId);
  if (episode.ended_at !== null) throw fail.episodeEnded(cmd.episodeId);
  if (now - episode.last_activity_at > ctx.episodeTtlMs) throw fail.episodeExpired(cmd.episodeId);
  const participants = yield* ctx.rows.participants(cmd.episodeId);
  const seq = episode.message_count;
  const context = seq > 0 ? (yield* ctx.rows.turnContent(cmd.episodeId, seq - 1)) ?? '' : '';
  yield* appendTurn(ctx, cmd.episodeId, participants, { seq, role: cmd.role, content: cmd.content, context, occurredAt: cmd.occurredAt ?? now });
  return { status: 'ok' };
}

/** Stores a turn as an episodic memory of the episode (linked to its participants) and counts it. */
export function* appendTurn(
  ctx: RuleContext, episodeId: string, participants: string[],
  turn: { seq: number; role: string; content: string; context: string; occurredAt: number },
): Step<void> {
  yield* insertMemory(ctx, {
    type: 'episodic', content: turn.content, confidence: 1, tier: 1, ownerId: null,
    episodeId, seq: turn.seq, role: turn.role, context: turn.context, occurredAt: turn.occurredAt,
    links: participants.map((entityId) => ({ entityId, relation: 'participant' as const })),
  });
  // Inactivity counts from arrival, not from when the turn was said (an imported 2023 turn is not stale).
  yield* ctx.rows.touchEpisode(episodeId, ctx.now());
}

/** Ends an episode (expired ones too) and stores what extraction produced from it. */
export function* endEpisode(cmd: CommandOf<'endEpisode'>, ctx: RuleContext): Step<WriterResults['endEpisode']> {
  const episode = yield* ctx.rows.episode(cmd.episodeId);
  if (!episode) throw fail.episodeNotFound(cmd.episodeId);
  if (episode.ended_at !== null) throw fail.episodeEnded(cmd.episodeId);
  yield* ctx.rows.endEpisode(cmd.episodeId, ctx.now(), cmd.outcome);
  // Extraction ran on a snapshot, possibly while waiting seconds for an LLM. If a delete has
  // removed any turn it read since, storing its output would bring forgotten data back.
  if ((yield* ctx.rows.countIds(cmd.sourceIds)) !== cmd.sourceIds.length) return { memories_created: 0 };
  // The same when a delete in progress is about to remove one of them.
  if (yield* ctx.deletes.anySourceHeld(ctx.rows, cmd.sourceIds)) return { memories_created: 0 };
  let created = 0;
  // What the conversation taught became true when it took place, not when extraction ran.
  for (const memory of cmd.memories) if (yield* storeExtracted(ctx, cmd.episodeId, memory, episode.started_at)) created++;
  return { memories_created: created };
}

export function* storeExtracted(ctx: RuleContext, episodeId: string, memory: ExtractedMemory, occurredAt: number): Step<boolean> {
  const [ownerName, ...mentioned] = memory.entities;
  if (ownerName === undefined) return false;
  const owner = yield* entity(ctx, ownerName);
  const links: NewMemory['links'] = [];
  for (const name of mentioned) {
    if (name !== ownerName) links.push({ entityId: (yield* entity(ctx, name)).id, relation: 'mention' });
  }
  return (yield* storeOwned(ctx, owner.id, {
    type: memory.memory_type, content: memory.content, confidence: memory.confidence,
    tier: memory.extraction_tier, ownerId: owner.id, episodeId, seq: null, role: null, links, occurredAt,
  })).created;
}
