// Token-bucket rate limiting: each client (API key, or address when auth is off) may burst
// up to `perMinute` requests and refills at perMinute/60 per second. Refusals say when the
// next request will be allowed (Retry-After, whole seconds).

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly refillPerMs: number;
  private readonly sweeper: NodeJS.Timeout | null;
  rejected = 0;

  constructor(private readonly perMinute: number, private readonly now: () => number = Date.now) {
    this.refillPerMs = perMinute / 60_000;
    // Full buckets carry no state worth keeping; dropping them bounds memory.
    this.sweeper = perMinute > 0 ? setInterval(() => this.sweep(), 60_000).unref() : null;
  }

  get enabled(): boolean {
    return this.perMinute > 0;
  }

  take(client: string): RateDecision {
    if (!this.enabled) return { allowed: true };
    const now = this.now();
    const bucket = this.buckets.get(client) ?? { tokens: this.perMinute, updatedAt: now };
    bucket.tokens = Math.min(this.perMinute, this.tokensAt(bucket, now));
    bucket.updatedAt = now;
    this.buckets.set(client, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    this.rejected++;
    return { allowed: false, retryAfterSeconds: this.secondsUntilOne(bucket.tokens) };
  }

  /** 0 when `client` may make a request now, else the seconds until it may (nothing is taken). */
  retryAfter(client: string): number {
    const bucket = this.enabled ? this.buckets.get(client) : undefined;
    if (bucket === undefined) return 0;
    const tokens = this.tokensAt(bucket, this.now());
    return tokens >= 1 ? 0 : this.secondsUntilOne(tokens);
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.now();
    for (const [client, bucket] of this.buckets) {
      if (this.tokensAt(bucket, now) >= this.perMinute) this.buckets.delete(client);
    }
  }

  /** The bucket's tokens at `now`, refilled since its last update (not capped). */
  private tokensAt(bucket: Bucket, now: number): number {
    return bucket.tokens + (now - bucket.updatedAt) * this.refillPerMs;
  }

  /** Whole seconds (at least 1) until a bucket holding `tokens` has one. */
  private secondsUntilOne(tokens: number): number {
    return Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000));
  }
}
