// One attribute however it is said (src/shared/fact-attributes.ts): the usual predicates of
// where someone lives, works and what as, favourites said as superlatives, British and American
// spellings. The writer and the contradiction detector both read facts through this rule; the
// supersession it drives is tested over HTTP on both backends (event-time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { factAttribute } from '../src/shared/fact-attributes.js';

const read = (fact: string) => factAttribute(fact);

test('phrasings of one attribute read as that attribute, with the value they name', () => {
  const cases: [string, string, string][] = [
    ['Ana lives in Porto', 'lives in', 'porto'],
    ['Ana relocated to Porto', 'lives in', 'porto'],
    ['Ana moved back to Porto.', 'lives in', 'porto'],
    ['Ana settled in Porto', 'lives in', 'porto'],
    ['Ana works at Lumen Energy', 'works at', 'lumen energy'],
    ['Ana is employed by Lumen Energy', 'works at', 'lumen energy'],
    ['Ana took a job at Lumen Energy', 'works at', 'lumen energy'],
    ['Ana got a new job with Lumen Energy', 'works at', 'lumen energy'],
    ['Ana is working for Lumen Energy', 'works at', 'lumen energy'],
    ['Ana works as a nurse', 'works as', 'nurse'],
    ['Ana is now working as an architect', 'works as', 'architect'],
    ['Ana took a job as a pilot', 'works as', 'pilot'],
    ["Ana's favourite colour is green", "'s favourite colour", 'green'],
    ["Ana's favorite color is green", "'s favourite colour", 'green'],
    ['Ana likes green best of all colours', "'s favourite colour", 'green'],
    ['Ana likes green the most of all colors', "'s favourite colour", 'green'],
    ['Ana loves ramen more than any other food', "'s favourite food", 'ramen'],
    ['Ana prefers Lisbon over all other cities', "'s favourite city", 'lisbon'],
    ['Ana likes tacos best of all dishes', "'s favourite dish", 'tacos'],
    ["Ana's favorite flavor is mint", "'s favourite flavour", 'mint'],
  ];
  for (const [fact, attribute, value] of cases) assert.deepEqual(read(fact), { attribute, value }, fact);
});

test('what sets no single-valued attribute stays unread: compatible facts, negations, "became a"', () => {
  for (const fact of ['Ana likes green', 'Ana works with Sam', 'Ana became a mother', 'Ana is now a member of the chess club',
    'Ana does not live in Porto', 'Ana likes tea and coffee']) {
    assert.equal(read(fact), null, fact);
  }
});
