// Entities are created on first use: get-or-create by (namespace, name). Atomic on SQLite because
// one thread writes one command at a time; on PostgreSQL the adapter's insert keeps one row per
// name even across nodes.
import { randomUUID } from 'node:crypto';
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import { FIRST_USE_KIND, type EntityKind, type EntityRecord } from '../../shared/schemas.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';

export function* entity(ctx: RuleContext, name: string, kind: EntityKind = FIRST_USE_KIND, fresh = false): Step<EntityRecord> {
  const existing = yield* ctx.rows.entityByName(name, fresh);
  if (existing) return existing;
  return yield* ctx.rows.insertEntity({ id: randomUUID(), name, kind }, ctx.now());
}

export function* ensureEntity(cmd: CommandOf<'ensureEntity'>, ctx: RuleContext): Step<WriterResults['ensureEntity']> {
  // Fresh: the answer is all this command does, so a stale cached entity would go unnoticed.
  return yield* entity(ctx, cmd.name, cmd.kind, true);
}
