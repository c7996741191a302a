// Opt-in: any OpenAI-compatible /v1/embeddings endpoint, through the official SDK.
import OpenAI from 'openai';
import { embedNonEmpty, normalize, type Embedder } from './embedder.js';
import { EMBEDDER_IDS } from '../../shared/embedder-identity.js';

export interface OpenAiEmbedderOptions {
  baseURL: string;
  model: string;
  apiKey: string | undefined;
  dimensions: number;
  timeoutMs: number;
}

export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.id = EMBEDDER_IDS.openai(options.model);
    this.dimensions = options.dimensions;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey ?? 'not-needed',
      timeout: options.timeoutMs,
      maxRetries: 1,
    });
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return embedNonEmpty(texts, this.dimensions, async (nonEmpty) => {
      // The SDK asks for base64 unless told otherwise; many OpenAI-compatible servers only speak floats.
      const response = await this.client.embeddings.create({ model: this.options.model, input: nonEmpty, encoding_format: 'float' });
      const byIndex = [...response.data].sort((a, b) => a.index - b.index);
      return byIndex.map((item) => {
        if (item.embedding.length !== this.dimensions) {
          throw new Error(`embedding endpoint returned ${item.embedding.length} dimensions, expected ${this.dimensions}`);
        }
        return normalize(Float32Array.from(item.embedding));
      });
    });
  }
}
