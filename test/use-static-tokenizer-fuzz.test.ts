// Reviewer's strengthening test: the ported tokenizer against the package's on seeded random
// texts mixing vocabulary pieces, ASCII, NFKC-changing, control, surrogate and astral symbols.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelDir } from '../src/workers/embedding/use-static.js';
import { SentencePieceTokenizer, type Vocabulary } from '../src/workers/embedding/sentencepiece.js';

test('use-static tokenizer: the same ids as the package on 3,000 seeded random texts and edge cases', async () => {
  const vocabulary = JSON.parse(readFileSync(join(modelDir(), 'vocab.json'), 'utf8')) as Vocabulary;
  const { EmbeddingsModel } = await import('@energetic-ai/embeddings');
  const reference = new EmbeddingsModel({ vocabulary, model: null as never }).tokenizer as { encode(text: string): number[] };
  const port = new SentencePieceTokenizer(vocabulary);
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const pieces = vocabulary.slice(6).map(([p]) => p.replace(/\u2581/g, ' '));
  const odd = ['', ' ', '\t', '\n', '\u0000', '\u00a0', '\u3000', '\u2581', '\ufffd', '\ud800', '\udc00', '🙂', '👨‍👩‍👧', 'e\u0301', 'ﬁ', '½', 'Ａ', '\u200b', '\ufeff', '東京', '𝔘', '”5'];
  const ascii = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?\'"-:;()';
  const texts = ['', ' ', '   ', '\u3000', '\ud800', 'a\ud800', '\u0000'.repeat(5), '\ufffd\ufffd x', '\u2581\u2581a', 'x'.repeat(4000), '🙂'.repeat(500)];
  for (let i = 0; i < 3000; i++) {
    let s = '';
    const length = Math.floor(rnd() ** 2 * 200);
    while (s.length < length) {
      const r = rnd();
      s += r < 0.4 ? pieces[Math.floor(rnd() * pieces.length)] : r < 0.75 ? ascii[Math.floor(rnd() * ascii.length)]
        : r < 0.9 ? odd[Math.floor(rnd() * odd.length)] : String.fromCodePoint(Math.floor(rnd() * 0x2ffff));
    }
    texts.push(s);
  }
  for (const text of texts) assert.deepEqual(port.encode(text), reference.encode(text), JSON.stringify(text).slice(0, 300));
});
