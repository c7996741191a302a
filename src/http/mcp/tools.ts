// The MCP tool catalogue, derived from the operation declarations (shared/operations/): every
// operation with an `mcp` binding is a tool whose input schema is the operation's input — the
// very schema its REST route validates with, through the same compileValidator (so a bad
// argument gets the same message as a bad REST body) — and which calls the same handler and
// answers with the same JSON the REST route returns.
import type { TSchema } from 'typebox';
import {
  OPERATION_NAMES, OPERATIONS, type OperationDeclaration, type OperationName, type PositionUse, type ToolAnnotations,
} from '../../shared/operations/index.js';
import { compileValidator, type Validator } from '../../shared/validation.js';
import { invoke, type Answer, type OperationHandlers, type RequestContext } from '../../core/operations/contract.js';

export interface MemoryTool {
  name: string;
  title: string;
  description: string;
  input: Validator<TSchema>;
  output: TSchema;
  annotations: ToolAnnotations;
  /** Names its commit's position in the result's `_meta` ('returned'), or reads one from the call's ('accepted'). */
  position?: PositionUse;
  run(ops: OperationHandlers, args: unknown, request: RequestContext): Answer<unknown> | Promise<Answer<unknown>>;
}

function toolOf(operation: OperationName): MemoryTool[] {
  const { mcp, input, output, position }: OperationDeclaration = OPERATIONS[operation];
  if (!mcp) return [];
  return [{
    ...mcp,
    // Compiled once, here, not per request (fresh MCP servers are built per request).
    input: compileValidator(input, 'arguments'),
    output,
    ...(position ? { position } : {}),
    run: (ops, args, request) => invoke(ops, operation, args, request),
  }];
}

/**
 * The order tools/list has always shown agents (what they do most first: memories, episodes,
 * entities, status); it is the operations' order otherwise, so a tool left out here comes last.
 */
const LISTED_FIRST: readonly OperationName[] = [
  'remember', 'recall', 'recallGrouped', 'startEpisode', 'addMessage', 'endEpisode',
  'forget', 'inspect', 'stats', 'consolidate', 'createEntity',
];
const rank = (operation: OperationName) => {
  const at = LISTED_FIRST.indexOf(operation);
  return at === -1 ? LISTED_FIRST.length : at;
};

export const MEMORY_TOOLS: readonly MemoryTool[] = Object.freeze(
  [...OPERATION_NAMES].sort((a, b) => rank(a) - rank(b)).flatMap(toolOf),
);

export const TOOLS_BY_NAME: ReadonlyMap<string, MemoryTool> = new Map(MEMORY_TOOLS.map((tool) => [tool.name, tool]));
