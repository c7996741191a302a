// What each HTTP phase sends. Bodies are generated per request (autocannon `setupRequest`),
// so recall queries and stored facts do not repeat: no cache along the way can turn the
// figures into a replay. Entities are the seeded ones (same corpus seed), as in a fleet
// whose users already exist.
import { Corpus } from './corpus.js';
import type { Request } from './load.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Per-connection state of an episode flow; autocannon resets it when the cycle restarts. */
interface EpisodeContext {
  participants?: string[];
  episodeId?: string;
  turn?: number;
}

export class Scenarios {
  private readonly corpus: Corpus;
  private counter = 0;

  constructor(seed: number, entityCount: number) {
    // Same names as the seeded database (the names depend only on seed and count), but a
    // different stream of texts from seeding.
    this.corpus = new Corpus(seed, entityCount);
    for (let i = 0; i < 1000; i++) this.corpus.next();
  }

  health(): Request[] {
    return [{ method: 'GET', path: '/v1/health' }];
  }

  remember(): Request {
    return {
      method: 'POST',
      path: '/v1/remember',
      headers: JSON_HEADERS,
      setupRequest: (req) => {
        const entity = this.corpus.entity();
        // The counter keeps each fact new: a repeated fact is an update, not a store.
        const fact = `${this.corpus.fact(entity)} (note ${++this.counter})`;
        return { ...req, body: JSON.stringify({ entity, fact, confidence: 0.9 }) };
      },
    };
  }

  recall(withEntityShare = 0): Request {
    return {
      method: 'POST',
      path: '/v1/recall',
      headers: JSON_HEADERS,
      setupRequest: (req) => {
        const body: Record<string, unknown> = { query: this.corpus.query(), limit: 5 };
        if (withEntityShare > 0 && this.corpus.next() < withEntityShare) body.entity = this.corpus.entity();
        return { ...req, body: JSON.stringify(body) };
      },
    };
  }

  recallGrouped(): Request {
    return {
      method: 'POST',
      path: '/v1/recall_grouped',
      headers: JSON_HEADERS,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ query: this.corpus.query(), limit: 20 }) }),
    };
  }

  /** start → `messages` turns → end, on one connection (the id travels in autocannon's context). */
  episodeFlow(messages = 4): Request[] {
    return [this.episodeStart(), ...Array.from({ length: messages }, () => this.episodeMessage()), this.episodeEnd()];
  }

  /**
   * A fleet: per 100 requests on a connection, 70 recalls (half filtered by entity), 25
   * remembers and 5 episode operations (start, 3 messages, end), interleaved in a fixed
   * shuffled order.
   */
  mixed(): Request[] {
    const kinds: ('recall' | 'remember' | 'episode')[] = [
      ...Array<'recall'>(70).fill('recall'), ...Array<'remember'>(25).fill('remember'), ...Array<'episode'>(5).fill('episode'),
    ];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(this.corpus.next() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
    }
    const episode = this.episodeFlow(3);
    let nextEpisodeStep = 0;
    return kinds.map((kind) => {
      if (kind === 'recall') return this.recall(0.5);
      if (kind === 'remember') return this.remember();
      return episode[nextEpisodeStep++];
    });
  }

  private episodeStart(): Request {
    return {
      method: 'POST',
      path: '/v1/episodes/start',
      headers: JSON_HEADERS,
      setupRequest: (req, ctx) => {
        const context = ctx as EpisodeContext;
        const participants = [this.corpus.entity(), this.corpus.entity()];
        context.participants = participants;
        return { ...req, body: JSON.stringify({ participants }) };
      },
      onResponse: (status, body, ctx) => {
        if (status === 200) (ctx as EpisodeContext).episodeId = JSON.parse(body).episode_id;
      },
    };
  }

  private episodeMessage(): Request {
    return {
      method: 'POST',
      headers: JSON_HEADERS,
      setupRequest: (req, ctx) => {
        const context = ctx as EpisodeContext;
        const [user, other] = context.participants ?? ['nobody', 'nobody'];
        const turn = (context.turn ?? 0) + 1;
        context.turn = turn;
        return {
          ...req,
          path: `/v1/episodes/${context.episodeId ?? 'missing'}/message`,
          body: JSON.stringify({ role: turn % 2 ? 'user' : 'assistant', content: `${user}: ${this.corpus.message(other)}` }),
        };
      },
    };
  }

  private episodeEnd(): Request {
    return {
      method: 'POST',
      headers: JSON_HEADERS,
      setupRequest: (req, ctx) => ({
        ...req,
        path: `/v1/episodes/${(ctx as EpisodeContext).episodeId ?? 'missing'}/end`,
        body: JSON.stringify({ outcome: 'success' }),
      }),
    };
  }
}
