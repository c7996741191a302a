// One interface for every embedder. Vectors are unit length, so cosine distance works and
// the stored id + dimension identify what a database was embedded with.

export interface Embedder {
  /** Stable identifier stored with the vectors, e.g. "use-lite-512" or "openai:text-embedding-3-small". */
  readonly id: string;
  readonly dimensions: number;
  /** One vector per text, same order. Empty texts get a zero vector (nothing to embed). */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** Embedding input is cut here: the gist of a long text is in its start, and model limits hold. */
export const MAX_EMBED_CHARS = 8_000;

export function embeddingInput(text: string): string {
  return text.slice(0, MAX_EMBED_CHARS);
}

export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

/** Runs `embed` on the non-empty texts only and puts zero vectors where a text was blank. */
export async function embedNonEmpty(
  texts: string[],
  dimensions: number,
  embed: (nonEmpty: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const positions: number[] = [];
  const nonEmpty: string[] = [];
  texts.forEach((text, i) => {
    if (text.trim().length > 0) {
      positions.push(i);
      nonEmpty.push(text);
    }
  });
  const out: Float32Array[] = texts.map(() => new Float32Array(dimensions));
  if (nonEmpty.length === 0) return out;
  const vectors = await embed(nonEmpty);
  positions.forEach((position, i) => (out[position] = vectors[i]));
  return out;
}
