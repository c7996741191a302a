// Consolidation's reads over PostgreSQL: the SQLite statements (sqlite/consolidation.ts)
// in PostgreSQL's dialect — greatest() for SQLite's two-argument max(), an explicit order.
import { DAY_MS } from '../../shared/fsrs.js';
import { float32FromBlob } from '../../shared/meta.js';
import { promotionWatermarkKey } from '../../shared/sql-schema.js';
import type { DecayCandidate, PromotionCandidate } from '../port/read-port.js';
import type { Sql } from './client.js';

export async function promotionWatermark(sql: Sql, namespaceId: number): Promise<number> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM meta WHERE key = ${promotionWatermarkKey(namespaceId)}`;
  return Number(row?.value ?? 0);
}

export async function newestEpisodicRowid(sql: Sql, namespaceId: number): Promise<number> {
  const [row] = await sql<{ rowid: number | null }[]>`SELECT max(rowid) AS rowid FROM memories
    WHERE namespace_id = ${namespaceId} AND memory_type = 'episodic'`;
  return row?.rowid ?? 0;
}

export async function promotionCandidates(sql: Sql, namespaceId: number, watermark: number, perSubject: number): Promise<PromotionCandidate[]> {
  const rows = await sql<(Omit<PromotionCandidate, 'vector'> & { embedding: Buffer | null })[]>`
    WITH candidate AS (
      SELECT m.rowid, m.content, m.content_key, m.episode_id,
        (SELECT p.entity_id FROM episode_participants p JOIN entities e ON e.id = p.entity_id
          WHERE p.episode_id = m.episode_id ORDER BY e.kind = 'user' DESC, p.position LIMIT 1) AS subject_id
      FROM memories m
      WHERE m.namespace_id = ${namespaceId} AND m.memory_type = 'episodic' AND m.archived = 0 AND m.promoted_into IS NULL
        AND lower(coalesce(m.role, '')) NOT IN ('assistant', 'agent', 'system', 'tool', 'bot')
    ),
    fresh AS (SELECT DISTINCT subject_id FROM candidate WHERE rowid > ${watermark}),
    newest AS (
      SELECT c.*, row_number() OVER (PARTITION BY c.subject_id ORDER BY c.rowid DESC) AS age
      FROM candidate c JOIN fresh f ON f.subject_id = c.subject_id
    )
    SELECT n.rowid, n.content, n.content_key, n.episode_id, n.subject_id, v.embedding FROM newest n
      LEFT JOIN memory_vectors v ON v.rowid = n.rowid
    WHERE n.age <= ${perSubject}
    ORDER BY n.rowid`;
  return rows.map(({ embedding, ...row }) => ({ ...row, vector: embedding ? float32FromBlob(embedding) : null }));
}

export async function decayCandidates(sql: Sql, namespaceId: number, now: number, archiveFactor: number): Promise<DecayCandidate[]> {
  return [...await sql<DecayCandidate[]>`
    SELECT rowid, stability, difficulty, last_access_at, decayed_at FROM memories
    WHERE namespace_id = ${namespaceId} AND archived = 0 AND (
      ${now}::bigint - greatest(last_access_at, coalesce(decayed_at, 0)) > stability * ${DAY_MS}
      OR ${now}::bigint - last_access_at > stability * ${archiveFactor}::float8 * ${DAY_MS})
    ORDER BY rowid`];
}
