// A stand-in for the OpenAI-compatible endpoints: a local HTTP server that speaks the
// chat-completions wire format (extraction) and the embeddings one (the `openai` embedder),
// so the service's real `openai` SDK paths are exercised. Embedding vectors come from the
// project's hashing embedder, so they are deterministic and similar texts stay similar.
// Each test says how it answers (JSON content, garbage, a refusal, an HTTP error, or never)
// and reads back the requests it received.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HashingEmbedder } from '../../src/workers/embedding/hashing.js';

export type FakeReply =
  | { kind: 'content'; content: string }
  | { kind: 'memories'; memories: unknown[] }
  | { kind: 'refusal'; refusal: string }
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'raw'; body: string }
  | { kind: 'hang' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** performance.now() once the body was read: before the reply, so before the caller saw it. */
  at: number;
}

export class FakeLlm {
  readonly requests: RecordedRequest[] = [];
  /** How the next requests are answered; set by each test. */
  reply: FakeReply = { kind: 'memories', memories: [] };
  /** Dimension of the vectors /embeddings returns. */
  embeddingDimensions = 32;
  /** When false, /embeddings answers 503 (an embedding endpoint that is down). */
  embeddingsUp = true;
  /**
   * Chat requests to drop unanswered (the socket destroyed), as an endpoint that closed a kept-alive
   * connection while idle fails the next request sent on it.
   */
  dropNext = 0;
  /** Inputs matching this make /embeddings answer 400, like a text over the model's limit. */
  rejectEmbeddingOf: RegExp | null = null;
  /**
   * /embeddings requests whose input matches this wait unanswered until `releaseEmbeddings` (a slow
   * endpoint, on cue), then are answered (or refused: rejectEmbeddingOf) as any other.
   */
  holdEmbeddingsOf: RegExp | null = null;
  private heldEmbeddings: { inputs: string[]; answer: () => void }[] = [];
  /** Requests held by a 'hang' reply, until `release()` or close. */
  private held: { res: ServerResponse; model: unknown }[] = [];

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<FakeLlm> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new FakeLlm(server, `http://127.0.0.1:${port}/v1`);
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  /** The last chat-completions request body. */
  get last(): any {
    return this.requests.at(-1)?.body;
  }

  /** Answers every held request now, with `reply` (the service may have timed out already). */
  release(reply: FakeReply): void {
    const held = this.held;
    this.held = [];
    for (const { res, model } of held) this.answer(res, model, reply);
  }

  /** The inputs of the /embeddings requests waiting now (holdEmbeddingsOf). */
  get embeddingsHeld(): string[] {
    return this.heldEmbeddings.flatMap((held) => held.inputs);
  }

  /** Answers the held /embeddings requests whose input matches `which`. */
  releaseEmbeddings(which: RegExp): void {
    const go = this.heldEmbeddings.filter((held) => held.inputs.some((input) => which.test(input)));
    this.heldEmbeddings = this.heldEmbeddings.filter((held) => !go.includes(held));
    for (const held of go) held.answer();
  }

  close(): Promise<void> {
    // Hanging requests would keep close() waiting forever.
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body: any = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // keep the text
    }
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, at: performance.now() });
    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
      await this.embeddings(res, body);
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    if (this.dropNext > 0) {
      this.dropNext--;
      req.socket.destroy();
      return;
    }
    if (this.reply.kind === 'hang') {
      this.held.push({ res, model: body?.model }); // no answer until released: the service's timeout must fire
      return;
    }
    this.answer(res, body?.model, this.reply);
  }

  private async embeddings(res: ServerResponse, body: any): Promise<void> {
    if (!this.embeddingsUp) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"embeddings unavailable"}}');
      return;
    }
    const inputs: string[] = Array.isArray(body?.input) ? body.input : [body?.input];
    // Held first: a held request is answered by the rules in force when it is released (a refusal
    // that arrives on cue).
    if (this.holdEmbeddingsOf && inputs.some((input) => this.holdEmbeddingsOf!.test(String(input)))) {
      await new Promise<void>((answer) => this.heldEmbeddings.push({ inputs: inputs.map(String), answer }));
    }
    if (this.rejectEmbeddingOf && inputs.some((input) => this.rejectEmbeddingOf!.test(String(input)))) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"input too long"}}');
      return;
    }
    const vectors = await new HashingEmbedder(this.embeddingDimensions).embed(inputs.map(String));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      object: 'list',
      // Like the real API: base64 of little-endian float32 when asked, else plain numbers.
      data: vectors.map((v, index) => ({
        object: 'embedding', index,
        embedding: body?.encoding_format === 'base64' ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : Array.from(v),
      })),
      model: body?.model ?? 'fake',
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
    }));
  }

  private answer(res: ServerResponse, model: unknown, reply: FakeReply): void {
    if (res.destroyed) return;
    switch (reply.kind) {
      case 'hang':
        this.held.push({ res, model });
        return;
      case 'status':
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body ?? '{"error":{"message":"fake failure"}}');
        return;
      case 'raw':
        res.writeHead(200, { 'content-type': 'application/json' }).end(reply.body);
        return;
      case 'refusal':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(model, null, reply.refusal)));
        return;
      case 'content':
      case 'memories': {
        const content = reply.kind === 'content' ? reply.content : JSON.stringify({ memories: reply.memories });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(model, content, null)));
      }
    }
  }
}

function completion(model: unknown, content: string | null, refusal: string | null) {
  return {
    id: `chatcmpl-fake-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof model === 'string' ? model : 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  };
}

/** A URL where nothing listens: a port that was bound, then released. */
export async function unreachableUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}
