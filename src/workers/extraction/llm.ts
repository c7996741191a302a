// Tier-2 extraction: one chat-completions call to the OpenAI-compatible endpoint configured by
// SERVICE_EXTRACTOR_URL / _MODEL / _API_KEY, through the official SDK (contract: DESIGN.md §3).
// It never throws: every failure (down, slow, refused, garbage) is returned as a reason, and
// the caller falls back to the tier-1 rules.
import OpenAI from 'openai';
import type { Config } from '../../shared/config.js';
import { parseExtraction, type ExtractedItem } from './parse.js';
import { SYSTEM_PROMPT, userMessage, type PromptInput } from './prompt.js';

export type LlmResult = { ok: true; items: ExtractedItem[] } | { ok: false; reason: string };

export class LlmExtractor {
  private readonly client: OpenAI;

  constructor(private readonly config: Pick<Config, 'extractorUrl' | 'extractorModel' | 'extractorApiKey' | 'extractorTimeoutMs'>) {
    this.client = new OpenAI({
      baseURL: config.extractorUrl,
      // Local endpoints take no key, but the SDK insists on one.
      apiKey: config.extractorApiKey ?? 'not-needed',
      timeout: config.extractorTimeoutMs,
      // A retry would double the time `end` can take; the rules are the retry.
      maxRetries: 0,
    });
  }

  async extract(input: PromptInput): Promise<LlmResult> {
    // One bound for the whole call, the second attempt included.
    const signal = AbortSignal.timeout(this.config.extractorTimeoutMs);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ask(input, signal);
      } catch (error) {
        // A connection that failed before any answer — typically a kept-alive socket the endpoint
        // closed while idle, met by the next request — is asked once more on a fresh one: that
        // costs milliseconds, where falling back would cost the episode its tier-2 memories.
        // A timeout or an answer of any kind is not retried.
        if (attempt === 1 && isConnectionError(error) && !signal.aborted) continue;
        const name = error instanceof Error ? error.name : 'Error';
        const message = error instanceof Error ? error.message : String(error);
        return { ok: false, reason: `${name}: ${message}` };
      }
    }
  }

  private async ask(input: PromptInput, signal: AbortSignal): Promise<LlmResult> {
    const completion = await this.client.chat.completions.create(
      {
        model: this.config.extractorModel,
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: userMessage(input) },
        ],
        response_format: { type: 'json_object' },
        temperature: 0,
      },
      // The SDK's own timeout stops at the response headers; this signal also bounds the body.
      { signal },
    );
    const choice = completion.choices?.[0];
    if (!choice) return { ok: false, reason: 'reply has no choices' };
    if (choice.message?.refusal) return { ok: false, reason: 'model refused' };
    if (choice.finish_reason === 'content_filter') return { ok: false, reason: 'reply was filtered' };
    const parsed = parseExtraction(choice.message?.content);
    return parsed.ok ? { ok: true, items: parsed.items } : parsed;
  }
}

/** The request got no answer because the connection failed (not a timeout, not an HTTP error). */
function isConnectionError(error: unknown): boolean {
  return error instanceof OpenAI.APIConnectionError && !(error instanceof OpenAI.APIConnectionTimeoutError);
}
