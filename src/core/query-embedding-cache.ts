// Recent query embeddings, kept on the main thread for every pool thread to share. Agents
// repeat queries, and embedding the query is the dominant cost of a recall with a local
// model (~14 ms of ~28 ms with USE-lite, bench:mixed): a hit sends the vector along with the
// task and the worker skips the model. Bounded in bytes (SERVICE_QUERY_CACHE_BYTES; 0 = off),
// keyed by embedder id and text, so a vector never outlives the model it came from — and by
// namespace: a hit answers faster, so a cache shared across tenants would let one time whether
// another has just asked the same question (the price: two tenants asking alike embed twice).
import { LRUCache } from 'lru-cache';

/** Map entry, key string and bookkeeping, roughly: counted so many short queries stay bounded too. */
const ENTRY_OVERHEAD_BYTES = 96;

export class QueryEmbeddingCache {
  private readonly cache: LRUCache<string, Float32Array> | null;
  hits = 0;
  misses = 0;

  constructor(
    private readonly embedderId: string,
    maxBytes: number,
  ) {
    this.cache = maxBytes > 0
      ? new LRUCache<string, Float32Array>({
          maxSize: maxBytes,
          // JS strings take up to 2 bytes a character.
          sizeCalculation: (vector, key) => vector.byteLength + 2 * key.length + ENTRY_OVERHEAD_BYTES,
        })
      : null;
  }

  get enabled(): boolean {
    return this.cache !== null;
  }

  /** Bytes held now (metrics). */
  get bytes(): number {
    return this.cache?.calculatedSize ?? 0;
  }

  get(namespace: string, text: string): Float32Array | undefined {
    if (!this.cache) return undefined;
    const vector = this.cache.get(this.key(namespace, text));
    if (vector) this.hits++;
    else this.misses++;
    return vector;
  }

  set(namespace: string, text: string, vector: Float32Array): void {
    // An entry larger than the whole cache is refused by lru-cache itself (it would evict everything).
    this.cache?.set(this.key(namespace, text), vector);
  }

  private key(namespace: string, text: string): string {
    // Neither the embedder id nor a namespace name holds U+0000 (namespace-name.ts refuses controls).
    return `${this.embedderId}\u0000${namespace}\u0000${text}`;
  }
}
