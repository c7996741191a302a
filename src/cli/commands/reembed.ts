// `reembed`: recompute every vector after an embedder change. This build has no embedding
// layer yet (it arrives with the vector-recall work), so the command says so plainly instead
// of pretending to work.
import { CliError, type Command } from '../args.js';

export const reembedCommand: Command = {
  name: 'reembed',
  summary: 'recompute all vectors after an embedder change (not available yet)',
  help: `Usage: memory-runtime reembed

Not available yet: this build has no embedder, so there is nothing to re-embed with.
It will recompute every memory's vector with the configured embedder, with a progress bar.`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run() {
    throw new CliError('reembed is not available yet: this build has no embedder to recompute vectors with');
  },
};
