// Token-bucket rate limiting: each client (API key, or address when auth is off) may burst
// up to `perMinute` requests and refills at perMinute/60 per second. Refusals say when the
// next request will be allowed (Retry-After, whole seconds).

interface Bucket {
  tokens: number;
  updatedAt: number;
  /** The bucket's own limit (a key's rate from the keys file), or the limiter's. */
  perMinute: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout | null;
  rejected = 0;

  constructor(private readonly perMinute: number, private readonly now: () => number = Date.now) {
    // Full buckets carry no state worth keeping; dropping them bounds memory.
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
  }

  get enabled(): boolean {
    return this.perMinute > 0;
  }

  /** `perMinute`: this client's own limit (a key's rate from the keys file); default the limiter's. */
  take(client: string, perMinute = this.perMinute): RateDecision {
    // A key's own rate (keys file) applies even when SERVICE_RATE_LIMIT is 0 (no default limit).
    if (perMinute <= 0) return { allowed: true };
    const now = this.now();
    const bucket = this.buckets.get(client) ?? { tokens: perMinute, updatedAt: now, perMinute };
    if (bucket.perMinute !== perMinute) bucket.perMinute = perMinute;
    bucket.tokens = Math.min(perMinute, this.tokensAt(bucket, now));
    bucket.updatedAt = now;
    this.buckets.set(client, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    this.rejected++;
    return { allowed: false, retryAfterSeconds: this.secondsUntilOne(bucket) };
  }

  /** 0 when `client` may make a request now, else the seconds until it may (nothing is taken). */
  retryAfter(client: string): number {
    const bucket = this.buckets.get(client);
    if (bucket === undefined) return 0;
    const tokens = this.tokensAt(bucket, this.now());
    return tokens >= 1 ? 0 : this.secondsUntilOne({ ...bucket, tokens });
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.now();
    for (const [client, bucket] of this.buckets) {
      if (this.tokensAt(bucket, now) >= bucket.perMinute) this.buckets.delete(client);
    }
  }

  /** The bucket's tokens at `now`, refilled since its last update (not capped). */
  private tokensAt(bucket: Bucket, now: number): number {
    return bucket.tokens + (now - bucket.updatedAt) * (bucket.perMinute / 60_000);
  }

  /** Whole seconds (at least 1) until a bucket holding `tokens` has one. */
  private secondsUntilOne({ tokens, perMinute }: Bucket): number {
    return Math.max(1, Math.ceil((1 - tokens) / (perMinute / 60_000) / 1000));
  }
}
