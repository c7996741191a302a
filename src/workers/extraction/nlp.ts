// The English analysis the tier-1 rules read: wink-nlp with its light English model (sentence
// boundaries, universal part-of-speech tags, lemmas, time and date entities). The model takes
// ~1 s to load and ~47 MB RSS, so it is loaded once per pool thread, on the first extraction.
import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

export interface Token {
  /** The text as written (apostrophes straightened). */
  text: string;
  lower: string;
  /** Universal POS tag: PRON, VERB, AUX, NOUN, PROPN, ADJ, ADV, ADP, CCONJ, SCONJ, PART, INTJ, PUNCT… */
  pos: string;
  lemma: string;
  /** Whitespace that preceded the token in the text ('' inside "I'm", "don't"). */
  space: string;
  /** The entity the token belongs to, when wink found one: DATE, TIME, DURATION, CARDINAL, EMOJI… */
  entity: string | null;
}

type Nlp = ReturnType<typeof winkNLP>;
let nlp: Nlp | null = null;

function engine(): Nlp {
  nlp ??= winkNLP(model);
  return nlp;
}

/** The text as sentences of tokens. */
export function analyse(text: string): Token[][] {
  const nlp = engine();
  const its = nlp.its;
  const doc = nlp.readDoc(text.replace(/[\u2018\u2019\u02bc]/g, "'").replace(/[\u201c\u201d]/g, '"'));
  const tokens = doc.tokens();
  // The typings model each `its` helper differently; every one used here yields a string per token.
  const column = (helper: unknown) => tokens.out(helper as typeof its.value) as string[];
  const texts = column(its.value);
  const pos = column(its.pos);
  const lemmas = column(its.lemma);
  const spaces = column(its.precedingSpaces);
  const entity: (string | null)[] = texts.map(() => null);
  const entities = doc.entities();
  const spans = entities.out(its.span) as unknown as [number, number][];
  const types = entities.out(its.type) as string[];
  spans.forEach(([first, last], i) => {
    for (let t = first; t <= last; t++) entity[t] = types[i];
  });
  const sentences = doc.sentences().out(its.span) as unknown as [number, number][];
  return sentences.map(([first, last]) => {
    const sentence: Token[] = [];
    for (let t = first; t <= last; t++) {
      sentence.push({ text: texts[t], lower: texts[t].toLowerCase(), pos: pos[t], lemma: lemmas[t], space: spaces[t], entity: entity[t] });
    }
    return sentence;
  });
}
