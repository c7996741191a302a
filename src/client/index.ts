// Typed client for the memory runtime's REST API (spec §4, "Client conventions"):
// Bearer key when configured, 30 s default timeout, recall limit default 5, every non-2xx
// answer raised as MemoryServiceError carrying the HTTP status and the server's error text.
import type {
  ConsolidateResult, CreateEntityInput, EndEpisodeResult, EntityRecord, ForgetResult, HealthResult, InspectResult,
  Outcome, RecallGroupedInput, RecallGroupedResult, RecallInput, RecallResult, RememberInput, StartEpisodeResult,
  StatsResult, StoredFactRecord,
} from '../shared/schemas.js';

export type * from '../shared/schemas.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_RECALL_LIMIT = 5;

export interface MemoryClientOptions {
  /** Base address, e.g. http://localhost:3000 */
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Injected fetch, for environments that need their own. */
  fetch?: typeof fetch;
}

export class MemoryServiceError extends Error {
  constructor(
    readonly status: number,
    /** The server's `error` text (or the raw body when it was not JSON). */
    readonly errorText: string,
    /** The server's stable error code, when it sent one. */
    readonly code?: string,
  ) {
    super(`HTTP ${status}: ${errorText}`);
    this.name = 'MemoryServiceError';
  }
}

export class MemoryTimeoutError extends Error {
  constructor(readonly timeoutMs: number, path: string) {
    super(`request to ${path} timed out after ${timeoutMs} ms`);
    this.name = 'MemoryTimeoutError';
  }
}

export class MemoryClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: MemoryClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetchImpl = options.fetch ?? fetch;
  }

  health(): Promise<HealthResult> {
    return this.request('GET', '/v1/health');
  }

  createEntity(name: string, kind: CreateEntityInput['kind'] = 'user'): Promise<EntityRecord> {
    return this.request('POST', '/v1/entities', { name, kind });
  }

  remember(input: RememberInput): Promise<StoredFactRecord> {
    return this.request('POST', '/v1/remember', input);
  }

  recall(input: RecallInput): Promise<RecallResult> {
    return this.request('POST', '/v1/recall', { ...input, limit: input.limit ?? DEFAULT_RECALL_LIMIT });
  }

  recallGrouped(input: RecallGroupedInput): Promise<RecallGroupedResult> {
    return this.request('POST', '/v1/recall_grouped', input);
  }

  startEpisode(participants: string[]): Promise<StartEpisodeResult> {
    return this.request('POST', '/v1/episodes/start', { participants });
  }

  addMessage(episodeId: string, role: string, content: string): Promise<{ status: 'ok' }> {
    return this.request('POST', `/v1/episodes/${encodeURIComponent(episodeId)}/message`, { role, content });
  }

  endEpisode(episodeId: string, outcome: Outcome | null = null): Promise<EndEpisodeResult> {
    return this.request('POST', `/v1/episodes/${encodeURIComponent(episodeId)}/end`, { outcome });
  }

  /**
   * Deletes every memory of the entity. The server performs the same snapshot-backed
   * deletion whatever `hardDelete` says; the flag is sent for compatibility.
   */
  forget(entity: string, hardDelete = false): Promise<ForgetResult> {
    return this.request('DELETE', `/v1/entities/${encodeURIComponent(entity)}?hard_delete=${hardDelete}`);
  }

  inspect(entity: string, limit?: number): Promise<InspectResult> {
    return this.request('POST', '/v1/inspect', limit === undefined ? { entity } : { entity, limit });
  }

  stats(): Promise<StatsResult> {
    return this.request('GET', '/v1/stats');
  }

  consolidate(): Promise<ConsolidateResult> {
    return this.request('POST', '/v1/consolidate');
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    let response: Response;
    try {
      response = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') throw new MemoryTimeoutError(this.timeoutMs, path);
      throw error;
    }
    const text = await response.text();
    if (!response.ok) {
      let errorText = text;
      let code: string | undefined;
      try {
        const parsed = JSON.parse(text) as { error?: unknown; code?: unknown };
        if (typeof parsed.error === 'string') errorText = parsed.error;
        if (typeof parsed.code === 'string') code = parsed.code;
      } catch {
        // not JSON: keep the raw text
      }
      throw new MemoryServiceError(response.status, errorText, code);
    }
    return JSON.parse(text) as T;
  }
}
