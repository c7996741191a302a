// Every writer command's rule, once: what it reads, decides and writes, against the row port
// (../rows.ts). Both adapters run this set; a command without a rule fails to compile.
import type { CommandOf, WriterCommandType, WriterResults } from '../../shared/protocol/writer.js';
import type { Step } from './rows.js';
import type { RuleContext } from './context.js';
import { consolidate } from './consolidate.js';
import { forgetBegin, forgetEnd, forgetEntity, forgetRows, retractMemory } from './deletes.js';
import { ensureEntity } from './entities.js';
import { addMessage, endEpisode, startEpisode } from './episodes.js';
import { importEpisode, rememberBatch } from './imports.js';
import { reinforce } from './reinforce.js';
import { remember } from './remember.js';
import { restoreRows } from './restore.js';
import { attachVectors, installVectorGeneration, moveVectors, retireSupersededVectors, retireVectorGenerations } from './vectors.js';

export type Rule<K extends WriterCommandType> = (command: CommandOf<K>, ctx: RuleContext) => Step<WriterResults[K]>;

export const RULES: { [K in WriterCommandType]: Rule<K> } = {
  ensureEntity,
  remember,
  rememberBatch,
  startEpisode,
  importEpisode,
  addMessage,
  endEpisode,
  forgetBegin,
  forgetEnd,
  forgetRows,
  forgetEntity,
  retractMemory,
  restoreRows,
  attachVectors,
  reinforce,
  consolidate,
  installVectorGeneration,
  moveVectors,
  retireVectorGenerations,
  retireSupersededVectors,
};

/** The rule of this command (TypeScript does not narrow `command.type` to K by itself). */
export function ruleFor<K extends WriterCommandType>(command: CommandOf<K>, ctx: RuleContext): Step<WriterResults[K]> {
  return (RULES[command.type as K] as Rule<K>)(command, ctx);
}
