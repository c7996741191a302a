// Promotion planning: what an entity said again and again across its conversations becomes
// one semantic memory of that entity. Candidates are active episodic memories not promoted
// before, spoken by the non-agent side, grouped by their episode's subject (the first user
// participant, else the first participant — the entity `end` extracts facts about).
// Only entities with a candidate newer than the last run's watermark are clustered: the
// others' statements were compared before and did not repeat.
import type { ConsolidationPlan } from '../../shared/protocol/writer.js';
import type { Embedder } from '../embedding/index.js';
import type { ReadPort } from '../port/read-port.js';
import { clusterRepeats, representative, type Statement } from './cluster.js';

/**
 * Newest candidates per entity a run considers (clustering is quadratic in the worst case). The
 * database applies it, so an entity with a million turns never brings them all into the pool thread.
 */
export const MAX_CANDIDATES_PER_ENTITY = 2_000;

/** Confidence of a promoted memory: 0.6 for two repeats, +0.1 per further repeat, at most 0.9. */
export function promotedConfidence(members: number): number {
  return Math.min(0.9, Math.round((0.6 + 0.1 * (members - 2)) * 1000) / 1000);
}

/** The reads promotion needs (the read port's). */
export type PromotionReads = Pick<ReadPort, 'promotionWatermark' | 'newestEpisodicRowid' | 'promotionCandidates'>;

export class PromotionPlanner {
  constructor(private readonly reads: PromotionReads, private readonly threshold: number) {}

  async plan(embedder: Promise<Embedder>): Promise<Pick<ConsolidationPlan, 'promote' | 'watermark'>> {
    const previous = await this.reads.promotionWatermark();
    // Read before the candidates: a row stored in between is above the watermark, seen next run.
    const watermark = Math.max(previous, await this.reads.newestEpisodicRowid());
    const bySubject = new Map<string, (Statement & { episodeId: string | null })[]>();
    for (const row of await this.reads.promotionCandidates(previous, MAX_CANDIDATES_PER_ENTITY)) {
      if (row.subject_id === null || row.content_key.length === 0) continue;
      const list = bySubject.get(row.subject_id) ?? [];
      list.push({ rowid: row.rowid, content: row.content, key: row.content_key, vector: row.vector, episodeId: row.episode_id });
      bySubject.set(row.subject_id, list);
    }
    const promotions: ConsolidationPlan['promote'] = [];
    for (const [ownerId, statements] of bySubject) {
      if (statements.length < 2) continue;
      await embedMissing(statements, embedder);
      for (const cluster of clusterRepeats(statements, this.threshold)) {
        const best = representative(cluster) as Statement & { episodeId: string | null };
        promotions.push({
          ownerId, content: best.content, confidence: promotedConfidence(cluster.length),
          episodeId: best.episodeId, members: cluster.map((s) => s.rowid),
        });
      }
    }
    return { promote: promotions, watermark };
  }
}

/** Rows the background backfill has not embedded yet get vectors now; without an embedder, exact repeats still cluster. */
async function embedMissing(statements: Statement[], embedder: Promise<Embedder>): Promise<void> {
  const missing = statements.filter((s) => s.vector === null);
  if (missing.length === 0) return;
  try {
    const vectors = await (await embedder).embed(missing.map((s) => s.content));
    missing.forEach((s, i) => (s.vector = vectors[i]));
  } catch {
    // leave them without vectors
  }
}
