// The candidate filter every PostgreSQL candidate read shares (namespace, active only, types,
// entity, time), as the SQLite adapter's FILTER_SQL: built per shape, so each shape gets its own
// prepared statement and plan rather than one generic plan full of "IS NULL OR" branches.
import type { CandidateFilter } from '../port/candidates.js';
import { LARGE_ENTITY, validNow } from '../port/candidates.js';
import type { Tx } from './client.js';

/** The filter on `memories m`. */
export function candidateFilter(tx: Tx, namespaceId: number, filter: CandidateFilter) {
  const time = filter.time ?? validNow();
  return tx`m.namespace_id = ${namespaceId} AND m.archived = 0
    ${time.allVersions || time.during ? tx`` : tx`AND (m.valid_until IS NULL OR m.valid_until > ${time.validAt})`}
    ${time.asOf ? tx`AND m.occurred_at <= ${time.validAt}` : tx``}
    ${time.since === null ? tx`` : tx`AND m.occurred_at >= ${time.since}`}
    ${time.until === null ? tx`` : tx`AND m.occurred_at <= ${time.until}`}
    ${time.during ? tx`AND m.occurred_at <= ${time.during.to} AND (m.valid_until IS NULL OR m.valid_until > ${time.during.from})
      AND (m.memory_type = 'semantic' OR m.occurred_at >= ${time.during.from})` : tx``}
    ${filter.types ? tx`AND m.memory_type = ANY(${filter.types}::text[])` : tx``}
    ${filter.entityId === null ? tx`` : tx`AND EXISTS (SELECT 1 FROM memory_entities fe
      WHERE fe.memory_rowid = m.rowid AND fe.entity_id = ${filter.entityId} AND fe.relation IN ('owner', 'participant'))`}`;
}

/** Whether the entity has few enough memories to walk them rather than filter the namespace. */
export async function isSmallEntity(tx: Tx, entityId: string): Promise<boolean> {
  const [{ n }] = await tx<{ n: number }[]>`SELECT count(*) AS n FROM (SELECT 1 FROM memory_entities
    WHERE entity_id = ${entityId} AND relation IN ('owner', 'participant') LIMIT ${LARGE_ENTITY + 1}) x`;
  return n <= LARGE_ENTITY;
}
