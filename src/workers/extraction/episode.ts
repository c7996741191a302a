// What `end` extracts from an episode, computed in the pool: the LLM extractor first (tier 2),
// the deterministic rules when it fails (tier 1). Storing, de-duplication against what the
// entity already holds and counting happen in the writer (WriteStore.endEpisode).
import { fail } from '../../shared/errors.js';
import type { PoolResults } from '../../shared/protocol/pool.js';
import type { ExtractedMemory } from '../../shared/protocol/writer.js';
import type { EntityRecord, Outcome } from '../../shared/schemas.js';
import type { ReadPort } from '../port/read-port.js';
import type { LlmExtractor } from './llm.js';
import { extractByRules, MAX_RULE_TEXT_CHARS, outcomeAdjusted, type TranscriptTurn } from './rules.js';
import { MAX_TRANSCRIPT_CHARS } from './prompt.js';
import { subjectOf } from './speakers.js';

type RuleExtractor = typeof extractByRules;

/**
 * The rules' memories, or none when they throw: they are the fallback, and a fault in them must
 * cost the episode its tier-1 memories, not its end (which would leave it open for ever).
 */
export function rulesOrNothing(rules: RuleExtractor, ...args: Parameters<RuleExtractor>): { memories: ExtractedMemory[]; failure?: string } {
  try {
    return { memories: rules(...args) };
  } catch (error) {
    return { memories: [], failure: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The text `end` reads: the rules' budget, which holds the LLM prompt's too (its turns are the
 * newest within MAX_TRANSCRIPT_CHARS, its newest turn whole, as here).
 */
export const EPISODE_READ_CHARS = Math.max(MAX_RULE_TEXT_CHARS, MAX_TRANSCRIPT_CHARS);

export async function extractEpisode(
  store: Pick<ReadPort, 'episode' | 'participants' | 'recentTranscript'>,
  llm: LlmExtractor,
  episodeId: string,
  outcome: Outcome | null,
  rules: RuleExtractor = extractByRules,
): Promise<PoolResults['prepareEpisodeEnd']> {
  const episode = await store.episode(episodeId);
  if (!episode) throw fail.episodeNotFound(episodeId);
  if (episode.ended_at !== null) throw fail.episodeEnded(episodeId);
  const participants = await store.participants(episodeId);
  // Older turns' text is never loaded: a transcript of any length costs `end` a bounded read.
  const { turns, earlierRoles } = await store.recentTranscript(episodeId, EPISODE_READ_CHARS);
  // The turns read are the ones a racing delete is checked against (WriteStore.endEpisode).
  return { ...(await extractTurns(llm, participants, turns, outcome, rules, earlierRoles)), sourceIds: turns.map((turn) => turn.id) };
}

/** What extraction makes of a conversation, stored (end) or about to be (episodes/import). */
export async function extractTurns(
  llm: LlmExtractor, participants: EntityRecord[], turns: TranscriptTurn[], outcome: Outcome | null,
  rules: RuleExtractor = extractByRules, earlierRoles: readonly string[] = [],
): Promise<Omit<PoolResults['prepareEpisodeEnd'], 'sourceIds'>> {
  const subject = subjectOf(participants);
  // Nothing was said: there is nothing to extract, and no reason to call a model.
  if (!subject || turns.length === 0) return { memories: [], extractor: 'none' };

  const reply = await llm.extract({ subject: subject.name, participants: participants.map((p) => p.name), outcome, turns });
  if (!reply.ok) {
    const { memories, failure } = rulesOrNothing(rules, turns, participants, outcome, earlierRoles);
    const fallbackReason = failure === undefined ? reply.reason : `${reply.reason}; the rules failed too (${failure}), nothing extracted`;
    return { memories, extractor: 'rules', fallbackReason };
  }
  const memories = reply.items.map((item): ExtractedMemory => ({
    content: item.content,
    memory_type: item.memory_type,
    // What worked is trusted more, what failed less: the same rule the tier-1 extractor applies.
    confidence: item.memory_type === 'procedural' ? outcomeAdjusted(item.confidence, outcome) : item.confidence,
    extraction_tier: 2,
    entities: [subject.name],
  }));
  return { memories, extractor: 'llm' };
}
