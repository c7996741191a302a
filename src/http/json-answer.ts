// An answer the pool worker already serialised to JSON (recall, recall_grouped, inspect): up to
// SERVICE_MAX_RESPONSE_BYTES that used to be built as objects in the worker, cloned across
// the thread and serialised again here. REST sends the bytes as they are, a socket-full at a
// time; MCP, which needs the value for structuredContent, parses them once.
import type { JsonBytes } from '../shared/protocol/pool.js';

const utf8 = new TextDecoder();

export class JsonAnswer<T> {
  constructor(readonly bytes: JsonBytes<T>) {}

  /** The JSON text (MCP's text content). */
  text(): string {
    return utf8.decode(this.bytes);
  }

  /** The value (MCP's structuredContent). */
  value(text = this.text()): T {
    return JSON.parse(text) as T;
  }
}
