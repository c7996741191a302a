// USE-lite's sentencepiece tokenizer (a Viterbi over the vocabulary's unigram log-probabilities),
// ported from @energetic-ai/embeddings (lib/tokenizer.ts, itself from tfjs-models'
// universal-sentence-encoder; Copyright 2019 Google LLC, Apache License 2.0). The package
// exports it only from a module that loads tfjs-core first (~15 MB RSS and ~250 ms per pool
// thread), which the static-table embedder (use-static.ts) does not otherwise need. It returns
// the same ids as the original, quirks included (test/use-static-embedder.test.ts compares them).

/** [piece, unigram log-probability]; the first RESERVED_SYMBOLS entries are padding and control symbols. */
export type Vocabulary = [string, number][];

const SEPARATOR = '\u2581';
const RESERVED_SYMBOLS = 6;

interface Piece {
  /** Length in symbols (code points). */
  length: number;
  score: number;
  index: number;
}

class TrieNode {
  readonly children = new Map<string, TrieNode>();
  piece: Piece | null = null;
}

export class SentencePieceTokenizer {
  private readonly root = new TrieNode();

  constructor(private readonly vocabulary: Vocabulary) {
    for (let index = RESERVED_SYMBOLS; index < vocabulary.length; index++) {
      const [text, score] = vocabulary[index]!;
      const symbols = [...text];
      let node = this.root;
      for (const symbol of symbols) {
        let next = node.children.get(symbol);
        if (!next) node.children.set(symbol, (next = new TrieNode()));
        node = next;
      }
      node.piece = { length: symbols.length, score, index };
    }
  }

  encode(input: string): number[] {
    const normalized = input.normalize('NFKC');
    const symbols = [...(normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized)];
    const n = symbols.length;
    // endsAt[e] = pieces ending at symbol e, in order of their start, shorter first per start.
    const endsAt: Piece[][] = Array.from({ length: n + 1 }, () => []);
    for (let start = 0; start < n; start++) {
      let found = false;
      let node = this.root.children.get(symbols[start]!);
      for (let i = start; i < n && node; i++) {
        if (node.piece) {
          endsAt[start + node.piece.length]!.push(node.piece);
          found = true;
        }
        node = node.children.get(symbols[i + 1]!);
      }
      // An unknown symbol: the unknown id (0), one symbol long, score 0.
      if (!found) endsAt[start + 1]!.push({ length: 1, score: 0, index: 0 });
    }
    const best = new Array<number>(n + 1).fill(0);
    const words = new Array<number>(n + 1).fill(0);
    for (let end = 0; end <= n; end++) {
      // The original visits candidates by ascending start (an object keyed by start), i.e. longest
      // first: the order they were pushed in above, so no sort is needed.
      for (const piece of endsAt[end]!) {
        const score = piece.score + best[end - piece.length]!;
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          words[end] = piece.index;
        }
      }
    }
    const reversed: number[] = [];
    // Steps back by the piece's UTF-16 length, as the original does (not its symbol count).
    for (let at = words.length - 1; at > 0; at -= this.vocabulary[words[at]!]![0].length) reversed.push(words[at]!);
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of reversed) {
      if (!(previousUnknown && id === 0)) merged.push(id);
      previousUnknown = id === 0;
    }
    return merged.reverse();
  }
}
