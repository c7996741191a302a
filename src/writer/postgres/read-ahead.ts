// A flush's duplicate checks read ahead: every `remember` of a flush asks first whether its
// owner already holds the fact (commands/remember.ts, WriteRows.ownedDuplicate) — one round
// trip each. Where nothing earlier in the flush can have changed the answer, the adapter reads
// them all in one statement after taking the namespace locks, and each command's check is
// answered from it: the same rows its own read would have found at its turn.
//
// A command's answer is read ahead only when every command before it in the flush is a
// `remember` of another entity: those write only rows owned by their own entity (the insert, the
// values it supersedes, the duplicate whose confidence it raises), never rows owned by this one;
// other writers of the namespace wait on its lock. Its owner must be a cached entity, the one the
// rule itself will use. The answer is used only when the rule asks exactly what was read (owner,
// content key, type, open-delete bound); otherwise the rule reads as usual.
import type { WriterRequest } from '../../shared/protocol/writer.js';
import { factAttribute } from '../../shared/fact-attributes.js';
import { storableText } from '../../shared/postgres-text.js';
import { contentKey } from '../../shared/text.js';
import type { OpenDeletes } from '../commands/open-deletes.js';
import type { MemoryRow } from '../commands/rows.js';
import type { Tx } from './connect.js';
import type { PgRowState } from './row-state.js';

/** One command's duplicate check, asked and answered. */
export interface DuplicateAhead {
  ownerId: string;
  key: string;
  aboveRowid: number;
  found: MemoryRow | undefined;
}

/** Fewer than this many answers save no round trip (the read-ahead is one itself). */
const WORTH_IT = 2;

/** The answers read ahead, by the command's index in the batch. */
export async function readDuplicatesAhead(
  tx: Tx, batch: WriterRequest[], namespaceIds: number[], stateOf: (namespaceId: number) => PgRowState, deletes: OpenDeletes,
): Promise<Map<number, DuplicateAhead>> {
  const ahead = new Map<number, DuplicateAhead>();
  const owners = new Set<string>();
  for (const [index, { command }] of batch.entries()) {
    if (command.type !== 'remember') break;
    const owner = `${namespaceIds[index]}:${command.entity}`;
    const repeated = owners.has(owner);
    owners.add(owner);
    if (repeated) continue;
    // Text PostgreSQL cannot hold fails its own command (a 4xx) at its turn, not the whole read;
    // a fact setting an attribute reads its duplicate with its timeline anyway (one statement).
    if (!storableText(command.fact) || factAttribute(command.fact) !== null) continue;
    const entity = stateOf(namespaceIds[index]!).cachedEntity(command.entity);
    if (entity) ahead.set(index, { ownerId: entity.id, key: contentKey(command.fact), aboveRowid: deletes.deletedUpTo(entity.id), found: undefined });
  }
  if (ahead.size < WORTH_IT) return new Map();
  const asked = [...ahead];
  // The same WHERE, ORDER BY and LIMIT as PgRows.ownedDuplicate, per command.
  const rows = await tx<(MemoryRow & { i: number })[]>`SELECT q.i, d.* FROM
      unnest(${asked.map(([index]) => index)}::int[], ${asked.map(([, a]) => a.ownerId)}::text[],
        ${asked.map(([, a]) => a.key)}::text[], ${asked.map(([, a]) => a.aboveRowid)}::bigint[]) AS q(i, owner_id, key, above)
    CROSS JOIN LATERAL (SELECT rowid, id, memory_type, content, confidence, stability, extraction_tier, occurred_at, valid_until, superseded_by
      FROM memories WHERE entity_id = q.owner_id AND md5(content_key) = md5(q.key) AND content_key = q.key AND memory_type = 'semantic'
        AND archived = 0 AND rowid > q.above ORDER BY valid_until IS NOT NULL, rowid LIMIT 1) d`;
  for (const { i, ...row } of rows) ahead.get(i)!.found = row;
  return ahead;
}
