// The question forms that ask for a time, and what counts as a memory that says when
// (src/workers/recall/time-evidence.ts; the ranking over HTTP on both backends: event-time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asksForTime, timeEvidence } from '../src/workers/recall/time-evidence.js';

test('question forms that ask for a time', () => {
  for (const query of ['When did Ana move to Porto?', "when's the dentist", 'and when was that', 'What year did she graduate?',
    'which month is the wedding', 'On what date did we sign', 'how long ago did he leave?', 'Since when does Ana cycle?', 'WHEN WERE THEY MARRIED']) {
    assert.equal(asksForTime(query), true, query);
  }
  for (const query of ['what did Ana say when she was in Paris', 'where does Ana live', 'how long is the trip',
    'what did we decide', 'when Ana moved, what did she sell?', 'whenever it rains']) {
    assert.equal(asksForTime(query), false, query);
  }
});

test('a memory says when if its text holds a date expression; the bonus is the weight, for those only', () => {
  const rows = [
    { rowid: 1, id: 'te-1', content: 'we went to the aquarium last Saturday' },
    { rowid: 2, id: 'te-2', content: 'the aquarium was wonderful' },
    { rowid: 3, id: 'te-3', content: 'Ana moved to Porto in May 2023' },
    { rowid: 4, id: 'te-4', content: 'see you two weeks from now' },
    { rowid: 5, id: 'te-5', content: 'I may go, I may not' },
    // Past the characters read (a date deep in a very long memory is not looked for).
    { rowid: 6, id: 'te-6', content: `${'word '.repeat(1000)}yesterday` },
  ];
  assert.deepEqual([...timeEvidence(rows, 0.3)], [[1, 0.3], [3, 0.3], [4, 0.3]]);
  assert.equal(timeEvidence(rows, 0).size, 0);
});
