// The WordNet reader and the expanded lexical probe behind issue 29's eighth step
// (docs/recall-quality.md): the figures depend on base forms, sense order, hypernym/hyponym
// levels and the expansion column being read as WordNet defines them. A small database in
// WordNet's own file format is written here (the real one is a package the project does not ship).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hypernymWords, hyponymWords, lemmaHead, loadWordNet, type WordNet } from '../bench/recall-quality/wordnet.js';
import { ExpansionIndex } from '../bench/recall-quality/expanded-lexical.js';
import { wordnetLexical, wordnetSetting } from '../bench/recall-quality/wordnet-lexical.js';
import { isStopword } from '../src/workers/recall/query-text.js';

const LICENCE = '  1 This software and database is being provided to you, the LICENSEE, by  \n';
// offset lex_filenum ss_type w_cnt word lex_id … p_cnt [symbol offset pos src/tgt]… | gloss
const DATA_NOUN = LICENCE + [
  '00000100 03 n 01 entity 0 001 ~ 00000200 n 0000 | that which exists',
  '00000200 04 n 01 activity 0 004 @ 00000100 n 0000 ~ 00000300 n 0000 ~ 00000400 n 0000 ~ 00000600 n 0000 | something done',
  '00000300 04 n 02 camping 0 encampment 0 001 @ 00000200 n 0000 | living in tents',
  '00000400 04 n 01 craft 0 002 @ 00000200 n 0000 ~ 00000500 n 0000 | skilled making',
  '00000500 04 n 02 pottery 0 ceramics 0 001 @ 00000400 n 0000 | the craft of making earthenware',
  '00000600 04 n 01 outdoor_game 0 001 @ 00000200 n 0000 | a game played outside',
  '00000700 15 n 01 Paris 0 001 @i 00000800 n 0000 | the capital of France',
  '00000800 15 n 01 city 0 001 ~i 00000700 n 0000 | a large town',
  '00000900 06 n 01 ceramic_ware 0 001 @ 00001000 n 0000 | utensils made of fired clay',
  '00001000 06 n 01 utensil 0 001 ~ 00000900 n 0000 | an implement',
].join('  \n') + '  \n';
// "pottery": the craft first, the ware second; "camp" only as a verb.
const INDEX_NOUN = LICENCE + [
  'activity n 1 2 @ ~ 1 0 00000200',
  'camping n 1 1 @ 1 0 00000300',
  'ceramic_ware n 1 2 @ ~ 1 0 00000900',
  'ceramics n 1 1 @ 1 0 00000500',
  'city n 1 1 ~i 1 0 00000800',
  'craft n 1 2 @ ~ 1 0 00000400',
  'encampment n 1 1 @ 1 0 00000300',
  'entity n 1 1 ~ 1 0 00000100',
  'outdoor_game n 1 1 @ 1 0 00000600',
  'paris n 1 1 @i 1 0 00000700',
  'pottery n 2 1 @ 2 0 00000500 00000900',
  'utensil n 1 1 ~ 1 0 00001000',
].join('  \n') + '  \n';
const DATA_VERB = LICENCE + [
  '00000100 38 v 01 travel 0 001 ~ 00000200 v 0000 01 + 02 00 | change location',
  '00000200 38 v 01 camp 0 001 @ 00000100 v 0000 01 + 02 00 | live in a tent',
].join('  \n') + '  \n';
const INDEX_VERB = LICENCE + ['camp v 1 1 @ 1 0 00000200', 'travel v 1 1 ~ 1 0 00000100'].join('  \n') + '  \n';

const keep = (w: string) => !isStopword(w);
let dir: string;
let wn: WordNet;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'wordnet-test-'));
  for (const [file, text] of Object.entries({ 'data.noun': DATA_NOUN, 'index.noun': INDEX_NOUN, 'data.verb': DATA_VERB, 'index.verb': INDEX_VERB })) writeFileSync(join(dir, file), text);
  wn = loadWordNet(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the WordNet reader', () => {
  test("base forms follow morphy's detachment rules, in the noun and the verb index", () => {
    assert.deepEqual(wn.baseForms('activities'), ['activity']);
    assert.deepEqual(wn.baseForms('camping').sort(), ['camp', 'camping']);
    assert.deepEqual(wn.baseForms('camped'), ['camp']);
    assert.deepEqual(wn.baseForms('cities'), ['city']);
    assert.deepEqual(wn.baseForms('walrus'), []);
  });

  test('the first sense is the first synset the index lists; all senses are every one', () => {
    assert.equal(wn.synsets('pottery', 'first').length, 1);
    assert.equal(wn.synsets('pottery', 'all').length, 2);
    assert.deepEqual(wn.lemmas(wn.synsets('pottery', 'first')[0]), ['pottery', 'ceramics']);
  });

  test('hypernyms and hyponyms climb one link a level, instance links included, the start left out', () => {
    const pottery = wn.synsets('pottery', 'first');
    const names = (synsets: Set<number>) => [...synsets].flatMap((s) => wn.lemmas(s)).sort();
    assert.deepEqual(names(wn.hypernyms(pottery, 1)), ['craft']);
    assert.deepEqual(names(wn.hypernyms(pottery, 2)), ['activity', 'craft']);
    assert.deepEqual(names(wn.hypernyms(pottery, 9)), ['activity', 'craft', 'entity']);
    assert.deepEqual(names(wn.hypernyms(wn.synsets('paris', 'first'), 1)), ['city']);
    assert.deepEqual(names(wn.hyponyms(wn.synsets('activity', 'first'), 1)), ['camping', 'craft', 'encampment', 'outdoor_game']);
    // Verbs are their own hierarchy: "camp" the verb is below "travel", not "activity".
    assert.deepEqual(names(wn.hypernyms(wn.synsets('camp', 'first'), 3)), ['travel']);
  });

  test("a multi-word lemma stands for its head word", () => {
    assert.equal(lemmaHead('outdoor_game'), 'game');
    assert.equal(lemmaHead('craft'), 'craft');
  });

  test("a text's hypernym words: its nouns' and verbs' ancestors' heads, not its own words or stopwords", () => {
    const tokens = ['i', 'signed', 'up', 'for', 'a', 'pottery', 'class', 'and', 'went', 'camping'];
    assert.deepEqual(hypernymWords(wn, tokens, 1, 'first', keep).sort(), ['activity', 'craft', 'travel']);
    assert.deepEqual(hypernymWords(wn, tokens, 2, 'first', keep).sort(), ['activity', 'craft', 'entity', 'travel']);
    // The second sense of pottery (the ware) only with every sense.
    assert.ok(!hypernymWords(wn, ['pottery'], 1, 'first', keep).includes('utensil'));
    assert.ok(hypernymWords(wn, ['pottery'], 1, 'all', keep).includes('utensil'));
  });

  test("a query's hyponym words: below its words, heads of multi-word lemmas, not the query's own forms", () => {
    assert.deepEqual(hyponymWords(wn, ['activities'], 1, 'first', keep).sort(), ['camping', 'craft', 'encampment', 'game']);
    assert.deepEqual(hyponymWords(wn, ['activities'], 2, 'first', keep).sort(), ['camping', 'ceramics', 'craft', 'encampment', 'game', 'pottery']);
  });

  test('a folder without the database files is refused', () => {
    assert.throws(() => loadWordNet(join(dir, 'missing')), /WordNet file missing/);
  });
});

describe('the lexical probe with WordNet expansion', () => {
  const rows = [
    { rowid: 1, content: 'Melanie: I signed up for a pottery class', context: '' },
    { rowid: 2, content: 'Melanie: we went camping with the kids', context: '' },
    { rowid: 3, content: 'Melanie: what a lovely day', context: 'the activities board' },
    { rowid: 4, content: 'Caroline: the weather is nice', context: '' },
    // Turns without the words, so that a word in three turns is still rare enough for a positive idf.
    ...['the bus was late', 'I had soup', 'see you soon', 'my sister called'].map((content, i) => ({ rowid: 5 + i, content: `Caroline: ${content}`, context: '' })),
  ];
  const ctx = (terms: string[]) => ({ query: terms.join(' '), terms, queryVector: null, queryEntityIds: [], filter: {} as never, depth: 10, now: 0 });

  test('with an empty expansion column the ranking is the turns\' own words (the store\'s)', () => {
    const index = new ExpansionIndex(rows, () => []);
    const plain = index.rank(['activities'], 10, [1, 0.3, 0.3]);
    assert.deepEqual(plain.map((p) => p.rowid), [3]);
    index.close();
  });

  test('document side: a turn whose hypernyms hold the question word matches it, weighted by x', () => {
    const lexical = wordnetLexical(wn, rows, { up: 2, down: 0, senses: 'first', x: 0.3, qx: 0, join: true });
    assert.ok(lexical.expansionOf(1).includes('activity'));
    // Turn 3 holds the word in its context (porter: activity, activities → activ); 1 and 2 through WordNet.
    const found = lexical.lexical(ctx(['activity']));
    assert.deepEqual(found.map((p) => p.rowid).sort(), [1, 2, 3]);
    lexical.close();
    // x 0: the column is indexed but weighs nothing.
    const silent = wordnetLexical(wn, rows, { up: 2, down: 0, senses: 'first', x: 0, qx: 0, join: true });
    const scores = new Map(silent.lexical(ctx(['activity'])).map((p) => [p.rowid, p.score]));
    assert.ok(scores.get(1) === 0 && scores.get(2) === 0 && scores.get(3)! > 0);
    silent.close();
  });

  test("query side: the question word's hyponyms find the turns that name an instance", () => {
    const lexical = wordnetLexical(wn, rows, { up: 0, down: 2, senses: 'first', x: 0, qx: 0.3, join: true });
    assert.ok(lexical.hyponymsOf(['activities']).includes('pottery'));
    const found = lexical.lexical(ctx(['activities']));
    assert.deepEqual(found.map((p) => p.rowid).sort(), [1, 2, 3]);
    // Without the query expansion only the literal match is found.
    const none = wordnetLexical(wn, rows, { up: 0, down: 2, senses: 'first', x: 0, qx: 0, join: true });
    assert.deepEqual(none.lexical(ctx(['activities'])).map((p) => p.rowid), [3]);
    // join 0: the hyponyms re-score what the query's own words found, they propose nothing.
    const rescoring = wordnetLexical(wn, rows, { up: 0, down: 2, senses: 'first', x: 0, qx: 0.3, join: false });
    assert.deepEqual(rescoring.lexical(ctx(['activities', 'class'])).map((p) => p.rowid).sort(), [1, 3]);
    const score = (found: { rowid: number; score: number }[], rowid: number) => found.find((p) => p.rowid === rowid)!.score;
    assert.ok(score(rescoring.lexical(ctx(['activities', 'class'])), 1) > score(none.lexical(ctx(['activities', 'class'])), 1));
    lexical.close();
    none.close();
    rescoring.close();
  });

  test('settings: the WordNet keys are split from the engine weights', () => {
    assert.deepEqual(wordnetSetting({ up: 2, x: 0.5, session: 0.4 }), { wordnet: { up: 2, down: 0, senses: 'first', x: 0.5, qx: 0.3, join: true }, rest: { session: 0.4 } });
    assert.deepEqual(wordnetSetting({ session: 0.4 }), { wordnet: null, rest: { session: 0.4 } });
    assert.equal(wordnetSetting({ down: 1, all: 1 }).wordnet?.senses, 'all');
  });
});
