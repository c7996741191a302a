// A sentence cut into clauses, each with its own subject and verb: "I drive a red Tesla and I
// live in Porto" holds two facts, "I moved to Lisbon and the ISP is different" one fact and
// one clause about something else. A cut is made at a conjunction or a comma only where a new
// subject and its verb follow, so "salt and pepper" or "tired, but happy" stay whole.
import type { Token } from './nlp.js';

const CUT_WORDS = new Set(['and', 'but', 'so', 'or', 'then', 'yet', 'plus']);
const CUT_PUNCT = new Set([',', ';', ':', '-', '–', '—', '...', '…']);
const SUBJECT_PRONOUNS = new Set(['i', 'you', 'he', 'she', 'it', 'we', 'they', "i'm", "i've", "i'll", "i'd"]);

/** Does a subject followed by its verb start at `i`? ("I live", "my sister is", "it was") */
export function subjectStartsAt(tokens: Token[], i: number): boolean {
  const first = tokens[i];
  if (!first) return false;
  let j: number;
  if (SUBJECT_PRONOUNS.has(first.lower)) {
    if (first.lower.includes("'")) return true;
    j = i + 1;
  } else if (first.pos === 'DET' || first.pos === 'PRON' || first.pos === 'PROPN') {
    // "my new job is", "the kids were", "Melanie went": a short noun phrase.
    j = i + 1;
    while (j < tokens.length && j - i <= 4 && ['ADJ', 'NOUN', 'PROPN', 'PART'].includes(tokens[j].pos)) j++;
    if (j === i + 1 && first.pos !== 'PROPN') return false;
  } else {
    return false;
  }
  while (j < tokens.length && tokens[j].pos === 'ADV') j++;
  return j < tokens.length && (tokens[j].pos === 'VERB' || tokens[j].pos === 'AUX');
}

export function clausesOf(sentence: Token[]): Token[][] {
  const clauses: Token[][] = [];
  let current: Token[] = [];
  for (let i = 0; i < sentence.length; i++) {
    const token = sentence[i];
    const cut = (CUT_WORDS.has(token.lower) && (token.pos === 'CCONJ' || token.pos === 'ADV')) || (token.pos === 'PUNCT' && CUT_PUNCT.has(token.text));
    if (cut && current.length > 0) {
      // Skip a conjunction right after the punctuation: ", and I …".
      let next = i + 1;
      while (next < sentence.length && (CUT_WORDS.has(sentence[next].lower) || sentence[next].pos === 'PUNCT')) next++;
      if (subjectStartsAt(sentence, next)) {
        clauses.push(current);
        current = [];
        i = next - 1;
        continue;
      }
    }
    current.push(token);
  }
  if (current.length > 0) clauses.push(current);
  return clauses;
}
