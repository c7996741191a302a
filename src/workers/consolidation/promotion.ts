// Promotion planning: what an entity said again and again across its conversations becomes
// one semantic memory of that entity. Candidates are active episodic memories not promoted
// before, spoken by the non-agent side, grouped by their episode's subject (the first user
// participant, else the first participant — the entity `end` extracts facts about).
// Only entities with a candidate newer than the last run's watermark are clustered: the
// others' statements were compared before and did not repeat.
import type { Db } from '../../shared/db.js';
import type { ConsolidationPlan } from '../../shared/messages.js';
import { promotionWatermarkKey } from '../../shared/sql-schema.js';
import type { Embedder } from '../embedding/index.js';
import { clusterRepeats, representative, type Statement } from './cluster.js';

/** Newest candidates per entity a run considers (clustering is quadratic in the worst case). */
export const MAX_CANDIDATES_PER_ENTITY = 2_000;

/** Confidence of a promoted memory: 0.6 for two repeats, +0.1 per further repeat, at most 0.9. */
export function promotedConfidence(members: number): number {
  return Math.min(0.9, Math.round((0.6 + 0.1 * (members - 2)) * 1000) / 1000);
}

interface CandidateRow {
  rowid: number;
  content: string;
  content_key: string;
  episode_id: string | null;
  subject_id: string | null;
  embedding: Buffer | null;
}

export class PromotionPlanner {
  private readonly s;

  constructor(db: Db, private readonly namespaceId: number, private readonly threshold: number) {
    this.s = {
      watermark: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      newest: db.prepare<[number], { rowid: number | null }>(
        "SELECT max(rowid) AS rowid FROM memories WHERE namespace_id = ? AND memory_type = 'episodic'"),
      candidates: db.prepare<{ ns: number; watermark: number }, CandidateRow>(`
        WITH candidate AS (
          SELECT m.rowid AS rowid, m.content, m.content_key, m.episode_id,
            (SELECT p.entity_id FROM episode_participants p JOIN entities e ON e.id = p.entity_id
              WHERE p.episode_id = m.episode_id ORDER BY e.kind = 'user' DESC, p.position LIMIT 1) AS subject_id
          FROM memories m
          WHERE m.namespace_id = @ns AND m.memory_type = 'episodic' AND m.archived = 0 AND m.promoted_into IS NULL
            AND lower(coalesce(m.role, '')) NOT IN ('assistant', 'agent', 'system', 'tool', 'bot')
        ),
        fresh AS (SELECT DISTINCT subject_id FROM candidate WHERE rowid > @watermark)
        SELECT c.*, v.embedding FROM candidate c JOIN fresh f ON f.subject_id = c.subject_id
          LEFT JOIN memory_vectors v ON v.rowid = c.rowid
        ORDER BY c.rowid`),
    };
  }

  async plan(embedder: Promise<Embedder>): Promise<Pick<ConsolidationPlan, 'promote' | 'watermark'>> {
    const previous = Number(this.s.watermark.get(promotionWatermarkKey(this.namespaceId))?.value ?? 0);
    // Read before the candidates: a row stored in between is above the watermark, seen next run.
    const watermark = Math.max(previous, this.s.newest.get(this.namespaceId)?.rowid ?? 0);
    const bySubject = new Map<string, (Statement & { episodeId: string | null })[]>();
    for (const row of this.s.candidates.iterate({ ns: this.namespaceId, watermark: previous })) {
      if (row.subject_id === null || row.content_key.length === 0) continue;
      const vector = row.embedding ? new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength)) : null;
      const list = bySubject.get(row.subject_id) ?? [];
      list.push({ rowid: row.rowid, content: row.content, key: row.content_key, vector, episodeId: row.episode_id });
      bySubject.set(row.subject_id, list);
    }
    const promotions: ConsolidationPlan['promote'] = [];
    for (const [ownerId, all] of bySubject) {
      if (all.length < 2) continue;
      const statements = all.slice(-MAX_CANDIDATES_PER_ENTITY);
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
