// recall_grouped: the recall pipeline's hits, grouped by the episode (session) they came
// from. Memories without an episode are single-memory groups with a null session_id.
import type { GroupOrder, GroupRecord } from '../../shared/schemas.js';
import { isoWithOffset } from '../../shared/text.js';
import { toMemory, type RecallHit } from './engine.js';

interface Group {
  sessionId: string | null;
  time: number;
  score: number;
  hits: RecallHit[];
}

export function groupHits(
  hits: RecallHit[],
  episodeStarts: Map<string, number>,
  order: GroupOrder,
  maxGroups: number | null,
): GroupRecord[] {
  const groups: Group[] = [];
  const byEpisode = new Map<string, Group>();
  for (const hit of hits) {
    const episodeId = hit.row.episode_id;
    if (episodeId === null) {
      groups.push({ sessionId: null, time: hit.row.created_at, score: hit.score, hits: [hit] });
      continue;
    }
    let group = byEpisode.get(episodeId);
    if (!group) {
      group = { sessionId: episodeId, time: episodeStarts.get(episodeId) ?? hit.row.created_at, score: 0, hits: [] };
      byEpisode.set(episodeId, group);
      groups.push(group);
    }
    group.hits.push(hit);
    // A session is as relevant as its best memory.
    group.score = Math.max(group.score, hit.score);
  }

  if (order === 'chronological') groups.sort((a, b) => a.time - b.time || b.score - a.score);
  else groups.sort((a, b) => b.score - a.score || a.time - b.time);

  return groups.slice(0, maxGroups ?? groups.length).map((group) => ({
    session_id: group.sessionId,
    session_time: isoWithOffset(group.time),
    group_score: Math.round(group.score * 1e6) / 1e6,
    // Inside a session, memories read in conversation order (turns by seq, then extracted ones).
    memories: [...group.hits].sort(conversationOrder).map((hit) => toMemory(hit.row, hit.score, hit.explanation)),
  }));
}

function conversationOrder(a: RecallHit, b: RecallHit): number {
  const seqA = a.row.seq ?? Number.MAX_SAFE_INTEGER;
  const seqB = b.row.seq ?? Number.MAX_SAFE_INTEGER;
  return seqA - seqB || a.row.created_at - b.row.created_at || a.row.rowid - b.row.rowid;
}
