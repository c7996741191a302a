// A recalled memory counts as a successful FSRS review: stability grows, last access moves.
import { reinforcedStability } from '../../shared/fsrs.js';
import type { CommandOf, WriterResults } from '../../shared/protocol/writer.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';

export function* reinforce(cmd: CommandOf<'reinforce'>, ctx: RuleContext): Step<WriterResults['reinforce']> {
  const rowids = [...new Set(cmd.rowids)];
  if (rowids.length === 0) return { reinforced: 0 };
  const states = yield* ctx.rows.reviewStates(rowids);
  for (const state of states) {
    const stability = reinforcedStability(state.stability, state.difficulty, cmd.at - state.last_access_at);
    yield* ctx.rows.review(state.rowid, stability, Math.max(cmd.at, state.last_access_at));
  }
  return { reinforced: states.length };
}
