// A memory as the writer creates it: a fresh id, the FSRS starting state, its entity links.
import { randomUUID } from 'node:crypto';
import { factAttribute } from '../../shared/fact-attributes.js';
import { INITIAL_DIFFICULTY, initialStability } from '../../shared/fsrs.js';
import type { MemoryType } from '../../shared/schemas.js';
import { contentKey } from '../../shared/text.js';
import type { MemoryInsert, MemoryRow, Relation, Step } from './rows.js';
import type { RuleContext } from './context.js';

export interface NewMemory {
  type: MemoryType;
  content: string;
  confidence: number;
  tier: number;
  ownerId: string | null;
  episodeId: string | null;
  seq: number | null;
  role: string | null;
  /** Episodic turns: the previous turn's text, indexed as context (see migration 6). */
  context?: string;
  links: { entityId: string; relation: Relation }[];
  /** When it was said or became true; default now. */
  occurredAt?: number;
  /** Already superseded on arrival (supersession.ts). */
  validUntil?: number | null;
  supersededBy?: string | null;
  /** Earlier values it supersedes once stored (supersession.ts). */
  supersedes?: MemoryInsert['supersedes'];
  /** contentKey(content), when the caller has it already. */
  contentKey?: string;
}

export function* insertMemory(ctx: RuleContext, memory: NewMemory): Step<MemoryRow> {
  const id = randomUUID();
  const stability = initialStability(memory.type, memory.confidence);
  const at = ctx.now();
  const occurredAt = memory.occurredAt ?? at;
  const validUntil = memory.validUntil ?? null;
  const supersededBy = memory.supersededBy ?? null;
  const rowid = yield* ctx.rows.insertMemory({
    id, type: memory.type, content: memory.content, contentKey: memory.contentKey ?? contentKey(memory.content),
    confidence: memory.confidence, stability, difficulty: INITIAL_DIFFICULTY, at, tier: memory.tier,
    ownerId: memory.ownerId, episodeId: memory.episodeId, seq: memory.seq, role: memory.role,
    context: memory.context ?? '', links: memory.links,
    occurredAt, validUntil, supersededBy, supersedes: memory.supersedes,
    factAttribute: memory.type === 'semantic' ? factAttribute(memory.content)?.attribute ?? null : null,
  });
  return {
    rowid, id, memory_type: memory.type, content: memory.content,
    confidence: memory.confidence, stability, extraction_tier: memory.tier,
    occurred_at: occurredAt, valid_until: validUntil, superseded_by: supersededBy,
  };
}
