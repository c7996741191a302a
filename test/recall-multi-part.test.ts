// Ranking stages for questions about people and several things, on small hand-made inputs
// (each assertion fails without its stage), and wired into the engine through the service:
// - who said it (who-said-it.ts): memories by or about a person the question names gain, in
//   proportion to how few of the candidates are;
// - one probe per named part (coverage.ts): the parts' best are taken in turn;
// - pseudo-relevance feedback (feedback.ts): the Rocchio query vector, the expansion terms.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/shared/db.js';
import { SqliteReadPort } from '../src/workers/sqlite/read-port.js';
import { RecallEngine } from '../src/workers/recall/engine.js';
import { whoSaidIt } from '../src/workers/recall/who-said-it.js';
import { coveringParts } from '../src/workers/recall/coverage.js';
import { expansionTerms, feedbackVector } from '../src/workers/recall/feedback.js';
import { post, startTestService, type TestService } from './support/service.js';

describe('who said it', () => {
  test('a memory by or about a named person gains weight × the share of candidates that are not', () => {
    const bonus = whoSaidIt([1, 2, 3, 4], new Set([2]), 0.4);
    assert.equal(bonus.get(2), 0.4 * (1 - 1 / 4));
    assert.equal(bonus.get(1), undefined);
    assert.equal(bonus.size, 1);
  });

  test('when every candidate is by or about them, or the weight is 0, nothing is added', () => {
    assert.equal(whoSaidIt([1, 2], new Set([1, 2]), 0.4).size, 0);
    assert.equal(whoSaidIt([1, 2], new Set([1]), 0).size, 0);
    assert.equal(whoSaidIt([1, 2], new Set(), 0.4).size, 0);
  });
});

describe('one probe per named part', () => {
  test('the parts take turns, so the second part is in the top two', () => {
    // 1, 2, 3 are Ann's, 4 and 5 Bo's, 6 neither's; by score 1 2 3 4 5 6.
    const order = coveringParts([1, 2, 3, 4, 5, 6], [new Set([1, 2, 3]), new Set([4, 5])]);
    assert.deepEqual(order.slice(0, 2), [1, 4]);
    assert.deepEqual(order, [1, 4, 6, 2, 5, 3]);
  });

  test('a memory of both parts counts for both; one part alone changes nothing', () => {
    // 1 is the first of both parts, so 2 and 3 are both parts' second; 4 (neither's) is its own part's first.
    assert.deepEqual(coveringParts([1, 2, 3, 4], [new Set([1, 2]), new Set([1, 3])]), [1, 4, 2, 3]);
    assert.deepEqual(coveringParts([3, 1, 2], [new Set([1, 2]), new Set([9])]), [3, 1, 2], 'a part with no candidate is no part');
  });
});

describe('pseudo-relevance feedback', () => {
  test('the query vector moves towards the mean of the feedback vectors, unit length', () => {
    const moved = feedbackVector(Float32Array.from([1, 0, 0]), [Float32Array.from([0, 2, 0]), Float32Array.from([0, 0, 1])], 1);
    // (1, 0, 0) + (0, 0.5, 0.5), normalised.
    const n = Math.sqrt(1.5);
    assert.deepEqual([...moved].map((x) => Math.round(x * 1e6) / 1e6), [1 / n, 0.5 / n, 0.5 / n].map((x) => Math.round(x * 1e6) / 1e6));
    const query = Float32Array.from([0, 1]);
    assert.equal(feedbackVector(query, [], 1), query);
    assert.equal(feedbackVector(query, [Float32Array.from([1, 0])], 0), query);
  });

  test('expansion terms recur across the feedback texts and are not query terms or stopwords', () => {
    const texts = ['We went camping by the lake', 'Camping again, the lake was cold', 'The kids loved the lake', 'A quiet evening'];
    assert.deepEqual(expansionTerms(texts, ['trips'], 5), ['lake', 'camping']);
    assert.deepEqual(expansionTerms(texts, ['lake'], 1), ['camping']);
  });
});
