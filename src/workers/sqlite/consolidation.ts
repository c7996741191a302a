// Consolidation's reads over the SQLite file (the SQLite read port's share of promotion.ts and
// decay.ts): the statements the planners have always run, prepared once per pool thread.
import type { Db } from '../../shared/db.js';
import { onConnection } from '../../shared/connection-statements.js';
import { DAY_MS } from '../../shared/fsrs.js';
import { float32FromBlob } from '../../shared/meta.js';
import { promotionWatermarkKey } from '../../shared/sql-schema.js';
import type { DecayCandidate, PromotionCandidate } from '../port/read-port.js';

type CandidateRow = Omit<PromotionCandidate, 'vector'> & { embedding: Buffer | null };

export class SqliteConsolidationReads {
  private readonly s;

  constructor(db: Db, private readonly namespaceId: number) {
    this.s = onConnection(db, SqliteConsolidationReads, () => ({
      watermark: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      newest: db.prepare<[number], { rowid: number | null }>(
        "SELECT max(rowid) AS rowid FROM memories WHERE namespace_id = ? AND memory_type = 'episodic'"),
      candidates: db.prepare<{ ns: number; watermark: number; perSubject: number }, CandidateRow>(`
        WITH candidate AS (
          SELECT m.rowid AS rowid, m.content, m.content_key, m.episode_id,
            (SELECT p.entity_id FROM episode_participants p JOIN entities e ON e.id = p.entity_id
              WHERE p.episode_id = m.episode_id ORDER BY e.kind = 'user' DESC, p.position LIMIT 1) AS subject_id
          FROM memories m
          WHERE m.namespace_id = @ns AND m.memory_type = 'episodic' AND m.archived = 0 AND m.promoted_into IS NULL
            AND lower(coalesce(m.role, '')) NOT IN ('assistant', 'agent', 'system', 'tool', 'bot')
        ),
        fresh AS (SELECT DISTINCT subject_id FROM candidate WHERE rowid > @watermark),
        newest AS (
          SELECT c.*, row_number() OVER (PARTITION BY c.subject_id ORDER BY c.rowid DESC) AS age
          FROM candidate c JOIN fresh f ON f.subject_id = c.subject_id
        )
        SELECT n.rowid, n.content, n.content_key, n.episode_id, n.subject_id, v.embedding FROM newest n
          LEFT JOIN memory_vectors v ON v.rowid = n.rowid
        WHERE n.age <= @perSubject
        ORDER BY n.rowid`),
      decay: db.prepare<Record<string, number>, DecayCandidate>(`
        SELECT rowid, stability, difficulty, last_access_at, decayed_at FROM memories
        WHERE namespace_id = @ns AND archived = 0 AND (
          @now - max(last_access_at, coalesce(decayed_at, 0)) > stability * ${DAY_MS}
          OR @now - last_access_at > stability * @archiveFactor * ${DAY_MS})`),
    }));
  }

  promotionWatermark(): number {
    return Number(this.s.watermark.get(promotionWatermarkKey(this.namespaceId))?.value ?? 0);
  }

  newestEpisodicRowid(): number {
    return this.s.newest.get(this.namespaceId)?.rowid ?? 0;
  }

  promotionCandidates(watermark: number, perSubject: number): PromotionCandidate[] {
    return this.s.candidates.all({ ns: this.namespaceId, watermark, perSubject }).map(({ embedding, ...row }) =>
      ({ ...row, vector: embedding ? float32FromBlob(embedding) : null }));
  }

  decayCandidates(now: number, archiveFactor: number): DecayCandidate[] {
    return this.s.decay.all({ ns: this.namespaceId, now, archiveFactor });
  }
}
