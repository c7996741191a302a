// The helpers behind the seventh step's measurements (docs/recall-quality.md): what "the query
// without the people it names" is, in text and in vector form. The figures depend on them
// removing exactly the names, nothing else.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mixed, namesIn, projectedOut, withoutNames } from '../bench/recall-quality/unnamed-query.js';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, d) => s + x * b[d], 0);

describe('the query without the names it holds', () => {
  test('only whole-word names, any case, are found', () => {
    assert.deepEqual(namesIn("What are melanie's hobbies?", ['Melanie', 'Mel', 'Caroline']), ['Melanie']);
    assert.deepEqual(namesIn('What did Caroline and Melanie paint?', ['Melanie', 'Caroline']), ['Melanie', 'Caroline']);
  });

  test('a name and its possessive go, the rest of the question stays', () => {
    assert.equal(withoutNames("What are Melanie's hobbies?", ['Melanie']), 'What are hobbies?');
    assert.equal(withoutNames('When did Caroline go to the melanoma clinic?', ['Caroline', 'Mel']), 'When did go to the melanoma clinic?');
  });

  test('a query that is only a name is kept whole (an empty query would embed as nothing)', () => {
    assert.equal(withoutNames('Melanie?', ['Melanie']), 'Melanie?');
  });

  test("projecting a name's vector out leaves a unit vector orthogonal to it", () => {
    const name = new Float32Array([1, 0, 0]);
    const query = new Float32Array([3, 4, 0]);
    const out = projectedOut(query, [name], 1);
    assert.ok(Math.abs(dot(out, name)) < 1e-6);
    assert.ok(Math.abs(dot(out, out) - 1) < 1e-6);
    // Half the projection leaves part of the name's direction in.
    assert.ok(dot(projectedOut(query, [name], 0.5), name) > 0.1);
  });

  test('mixing is a unit vector between the two', () => {
    const m = mixed(new Float32Array([1, 0]), new Float32Array([0, 2]), 0.5);
    assert.ok(Math.abs(m[0] - Math.SQRT1_2) < 1e-6 && Math.abs(m[1] - Math.SQRT1_2) < 1e-6);
  });
});
