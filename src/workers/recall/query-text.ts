// A query's terms: the lower-cased words of arbitrary user text, letters and digits only (so no
// operator or punctuation reaches a lexical index's query parser: sqlite/fts-match.ts).

const STOPWORDS = new Set(
  ('a an and are as at be but by did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this to was we were ' +
    'what when where which who whom why will with you your about can could would should')
    .split(' '),
);

const MAX_TERMS = 32;

/** Whether the word (lower-cased) is one queryTerms drops when the query holds another. */
export const isStopword = (word: string): boolean => STOPWORDS.has(word);

/** Lower-cased, de-duplicated word tokens of the text, in order. */
export function tokenize(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)];
}

/** Content words of a query; stopwords are dropped unless nothing else is left. */
export function queryTerms(text: string): string[] {
  const words = tokenize(text);
  const content = words.filter((w) => !STOPWORDS.has(w));
  return (content.length > 0 ? content : words).slice(0, MAX_TERMS);
}
