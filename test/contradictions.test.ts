// The contradiction rules, unit by unit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findContradictions } from '../src/workers/recall/contradictions.js';
import type { MemoryRow } from '../src/workers/port/rows.js';

let next = 1;
function fact(content: string, entity = 'e1', memory_type: MemoryRow['memory_type'] = 'semantic'): MemoryRow {
  const rowid = next++;
  return {
    rowid, id: `id-${rowid}`, content, memory_type, confidence: 0.8, stability: 1, last_access_at: 0,
    created_at: 0, episode_id: null, seq: null, role: null, entity_id: entity, extraction_tier: 1,
    occurred_at: 0, valid_until: null, superseded_by: null,
  };
}

const conflicts = (...facts: MemoryRow[]) => findContradictions(facts).length;

test('single-valued attributes with different values conflict', () => {
  assert.equal(conflicts(fact('Alice lives in Berlin'), fact('Alice lives in Madrid')), 1);
  assert.equal(conflicts(fact('works at Acme Corp'), fact('works at Globex')), 1);
  assert.equal(conflicts(fact("Alice's favourite colour is blue"), fact("Alice's favourite colour is green")), 1);
  assert.equal(conflicts(fact('Sam is 31 years old'), fact('Sam is 32 years old')), 1);
});

test('negation of the same statement conflicts', () => {
  assert.equal(conflicts(fact('Bob likes sushi'), fact('Bob does not like sushi')), 1);
  assert.equal(conflicts(fact("Bob doesn't eat meat."), fact('Bob eats meat')), 1, 'verb forms are matched');
  assert.equal(conflicts(fact('Bob likes sushi'), fact('Bob likes ramen')), 0);
  assert.equal(conflicts(fact('Bob is vegetarian'), fact('Bob is not vegetarian')), 1);
});

test('changed quantities and times conflict; identifiers and events do not', () => {
  assert.equal(conflicts(fact('Carol has 2 cats'), fact('Carol has 3 cats')), 1);
  assert.equal(conflicts(fact('The standup is at 9:30'), fact('The standup is at 10:00')), 1);
  assert.equal(conflicts(fact('Alice visited museum number 1'), fact('Alice visited museum number 7')), 0);
  assert.equal(conflicts(fact('Dan is in room 12'), fact('Dan is in room 14')), 0);
});

test('compatible facts raise nothing', () => {
  assert.equal(conflicts(fact('likes tea'), fact('likes coffee')), 0);
  assert.equal(conflicts(fact('is allergic to peanuts'), fact('is allergic to shellfish')), 0);
  assert.equal(conflicts(fact('Alice lives in Berlin'), fact('Alice lives in Berlin.')), 0);
  assert.equal(conflicts(fact('Alice lives in Berlin'), fact('Alice likes Madrid')), 0);
});

test('only semantic memories of the same entity are compared', () => {
  assert.equal(conflicts(fact('lives in Berlin', 'e1'), fact('lives in Madrid', 'e2')), 0);
  assert.equal(conflicts(fact('I live in Berlin', 'e1', 'episodic'), fact('I live in Madrid', 'e1', 'episodic')), 0);
});

test('each conflicting pair is reported once, naming both facts', () => {
  const found = findContradictions([fact('lives in Berlin'), fact('lives in Madrid'), fact('lives in Paris')]);
  assert.equal(found.length, 3);
  assert.ok(found[0].description.includes('lives in Berlin') && found[0].description.includes('lives in Madrid'));
});

test('at most 50 pairs are reported, the best-ranked first', () => {
  const facts = Array.from({ length: 1000 }, (_, i) => fact(`X lives in City${i}`, 'crowd'));
  const found = findContradictions(facts);
  assert.equal(found.length, 50);
  assert.ok(found.every((c) => c.description.startsWith('"X lives in City0" conflicts with')), 'pairs follow rank order');
  assert.equal(conflicts(...facts.slice(0, 10)), 45, 'under the cap every pair is still reported');
});

test('long memories are quoted as their first 200 characters and an ellipsis', () => {
  const long = `Alice lives in ${'Berlin '.repeat(100)}`.trim();
  const [found] = findContradictions([fact(long), fact('Alice lives in Madrid')]);
  assert.equal(found.description, `"${long.slice(0, 200)}…" conflicts with "Alice lives in Madrid": different values for "lives in"`);
  // Cutting never splits a character made of two UTF-16 units.
  const emoji = `Bob lives in ${'🙂'.repeat(300)}`;
  const [withEmoji] = findContradictions([fact(emoji), fact('Bob lives in Rome')]);
  const quoted = withEmoji.description.slice(1, withEmoji.description.indexOf('…'));
  assert.equal(quoted, `Bob lives in ${'🙂'.repeat(200 - 'Bob lives in '.length)}`);
});

test('facts that never held at the same time do not conflict; each reported pair names its memories', () => {
  const berlin = { ...fact('Alice lives in Berlin'), occurred_at: 100, valid_until: 200 };
  const madrid = { ...fact('Alice lives in Madrid'), occurred_at: 200 };
  assert.equal(conflicts(berlin, madrid), 0);
  // Valid from the same moment: time cannot decide, the pair is reported.
  const lisbon = { ...fact('Alice lives in Lisbon'), occurred_at: 200 };
  const [found] = findContradictions([madrid, lisbon]);
  assert.deepEqual(found!.memory_ids, [madrid.id, lisbon.id]);
});
