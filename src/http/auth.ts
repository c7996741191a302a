// Bearer-key authentication, by digest: the presented key's SHA-256 is looked up in a Map, so a
// request costs the same with one key or 100,000, and neither the keys file nor memory after
// start holds a key in plain text (SERVICE_API_KEYS' keys are hashed once, at start). The
// digest is what is looked up, so response time says nothing about a key's length or prefix.
import type { ApiKeyBinding } from '../shared/config.js';
import { keyDigest } from '../shared/api-keys-file.js';

/** An accepted key: who it is (for rate limiting) and what it may act on. */
export interface ApiKey {
  /** The digest, hex: names the key's rate-limit bucket without holding the key itself. */
  readonly digest: string;
  /** The namespace the key is bound to; null for an operator key (any namespace, by header). */
  readonly namespace: string | null;
  /** Its own requests per minute (keys file); null: SERVICE_RATE_LIMIT. */
  readonly perMinute: number | null;
}

export { keyDigest };

export class ApiKeyAuth {
  private readonly configured: ReadonlyMap<string, ApiKey>;
  /** The keys file's keys, swapped whole on a reload (keys-file.ts). */
  private fromFile: ReadonlyMap<string, ApiKey> = new Map();

  /** `fileEnabled`: SERVICE_API_KEYS_FILE is set, so keys are required even while it lists none. */
  constructor(bindings: readonly ApiKeyBinding[], private readonly fileEnabled = false) {
    this.configured = new Map(bindings.map(({ key, namespace }) => {
      const digest = keyDigest(key);
      return [digest, { digest, namespace, perMinute: null }];
    }));
  }

  get enabled(): boolean {
    return this.configured.size > 0 || this.fileEnabled;
  }

  /** Replaces the keys file's keys at once: a request sees the old set or the new one, never a mix. */
  replaceFileKeys(keys: ReadonlyMap<string, ApiKey>): void {
    this.fromFile = keys;
  }

  /** The presented key when it is valid, otherwise null. */
  authenticate(authorization: string): ApiKey | null {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return null;
    const digest = keyDigest(match[1]);
    return this.configured.get(digest) ?? this.fromFile.get(digest) ?? null;
  }
}
