// Chooses the embedder from configuration (SERVICE_EMBEDDER).
import type { Config } from '../../shared/config.js';
import type { Embedder } from './embedder.js';
import { GloveEmbedder } from './glove.js';
import { HashingEmbedder } from './hashing.js';
import { OpenAiEmbedder } from './openai.js';
import { UseLiteEmbedder } from './use-lite.js';
import { UseStaticEmbedder } from './use-static.js';

export type { Embedder } from './embedder.js';
export { embedderIdentity } from '../../shared/embedder-identity.js';

export async function createEmbedder(config: Config): Promise<Embedder> {
  const e = config.embedder;
  switch (e.kind) {
    case 'use':
      return UseLiteEmbedder.load();
    case 'use-static':
      return UseStaticEmbedder.load();
    case 'glove':
      return GloveEmbedder.load();
    case 'hash':
      return new HashingEmbedder(e.dimensions);
    case 'openai':
      return new OpenAiEmbedder({ baseURL: e.url, model: e.model, apiKey: e.apiKey, dimensions: e.dimensions, timeoutMs: 30_000 });
  }
}
