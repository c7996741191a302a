// Embeds the queries of concurrent recalls together. A local model pays a fixed cost per call
// on top of its cost per text: USE-lite (tfjs wasm-SIMD) took 15.8 ms of CPU for one query
// alone and 6.7 ms per query in batches of 8, with the same vectors (docs/recall-at-scale.md).
// Under load recalls arrive while a model call runs; they wait for it to end and go together
// in the next call, so batches grow with the load and a lone recall waits for nobody.
//
// As many calls run at once as the service has interactive threads: a recall arriving while a
// thread is free is embedded at once (light load keeps its latency), and batches form only
// when every call slot is taken, which is when the per-call cost matters.

/** The most texts one model call takes: past ~16, per-text cost no longer falls. */
const MAX_BATCH = 16;

interface Waiting {
  text: string;
  resolve: (vector: Float32Array | undefined) => void;
}

export class QueryEmbeddingBatcher {
  private waiting: Waiting[] = [];
  private running = 0;
  /** Model calls made and texts embedded by them (metrics, tests). */
  calls = 0;
  texts = 0;

  constructor(
    /** One model call over `texts`; null where a text could not be embedded. */
    private readonly embedBatch: (texts: string[]) => Promise<(Float32Array | null)[]>,
    private readonly maxRunning: number,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  /** The query's vector, or undefined if the model failed (the recall then embeds or goes without). */
  embed(text: string): Promise<Float32Array | undefined> {
    return new Promise((resolve) => {
      this.waiting.push({ text, resolve });
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.maxRunning && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.running++;
      this.calls++;
      this.texts += batch.length;
      this.embedBatch(batch.map((w) => w.text))
        .then((vectors) => batch.forEach((w, i) => w.resolve(vectors[i] ?? undefined)))
        .catch(() => batch.forEach((w) => w.resolve(undefined)))
        .finally(() => {
          this.running--;
          this.next();
        });
    }
  }
}
