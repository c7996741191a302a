// Bearer-key authentication. Keys are compared as SHA-256 digests with timingSafeEqual, and
// every configured key is checked, so response time reveals neither length nor prefix.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

export class ApiKeyAuth {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /** The presented key when it is valid, otherwise null. */
  authenticate(authorization: string): string | null {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return null;
    const presented = digest(match[1]);
    let valid = false;
    for (const known of this.digests) valid = timingSafeEqual(known, presented) || valid;
    return valid ? match[1] : null;
  }
}
