// The Berlin → Madrid → Lisbon timeline the event-time tests store and check (docs/time.md).
import assert from 'node:assert/strict';
import { post } from './service.js';

export const T2021 = '2021-03-01T09:00:00+01:00';
export const T2022 = '2022-03-01T09:00:00Z';
export const T2023 = '2023-03-01T09:00:00-05:00';
/** The service's spelling of a time (UTC with an explicit +00:00). */
export const iso = (text: string) => new Date(text).toISOString().replace('Z', '+00:00');

export async function remember(base: string, entity: string, fact: string, validFrom?: string) {
  const r = await post(base, '/v1/remember', validFrom ? { entity, fact, valid_from: validFrom } : { entity, fact });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

export async function recall(base: string, body: Record<string, unknown>) {
  const r = await post(base, '/v1/recall', { limit: 20, ...body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { memories: any[]; contradictions: any[] };
}

export const contents = (answer: { memories: { content: string }[] }) => answer.memories.map((m) => m.content).sort();

/** Stores "<who> lives in Berlin / Madrid / Lisbon" valid from 2021, 2022, 2023, in this order of years. */
export async function storeChain(base: string, who: string, years: (2021 | 2022 | 2023)[] = [2021, 2022, 2023]) {
  const city = { 2021: ['Berlin', T2021], 2022: ['Madrid', T2022], 2023: ['Lisbon', T2023] } as const;
  for (const year of years) await remember(base, who, `${who} lives in ${city[year][0]}`, city[year][1]);
}

/** Checks the three-city chain of `who` (facts "<who> lives in <city>") wherever it was stored from. */
export async function assertChain(base: string, who: string) {
  const query = `where does ${who} live`;
  const now = await recall(base, { query, entity: who });
  assert.deepEqual(contents(now), [`${who} lives in Lisbon`]);
  assert.deepEqual(now.contradictions, []);
  assert.equal(now.memories[0].valid_until, null);
  assert.equal(now.memories[0].superseded_by, null);
  assert.equal(now.memories[0].occurred_at, iso(T2023));

  for (const [asOf, city] of [['2021-12-31T00:00:00Z', 'Berlin'], ['2022-12-31T00:00:00Z', 'Madrid'], ['2024-01-01T00:00:00Z', 'Lisbon']]) {
    assert.deepEqual(contents(await recall(base, { query, entity: who, as_of: asOf })), [`${who} lives in ${city}`], `as_of ${asOf}`);
  }
  // Before anything was true, nothing was.
  assert.deepEqual(contents(await recall(base, { query, entity: who, as_of: '2020-01-01T00:00:00Z' })), []);

  const all = await recall(base, { query, entity: who, include_superseded: true });
  const byCity = new Map(all.memories.map((m) => [m.content.split(' ').pop(), m]));
  assert.deepEqual([...byCity.keys()].sort(), ['Berlin', 'Lisbon', 'Madrid']);
  const [berlin, madrid, lisbon] = ['Berlin', 'Madrid', 'Lisbon'].map((c) => byCity.get(c));
  assert.equal(berlin.superseded_by, madrid.id);
  assert.equal(berlin.valid_until, iso(T2022));
  assert.equal(madrid.superseded_by, lisbon.id);
  assert.equal(madrid.valid_until, iso(T2023));
  assert.equal(lisbon.superseded_by, null);
  // They never held at the same time: no contradiction among them.
  assert.deepEqual(all.contradictions, []);

  // inspect leaves superseded facts out unless asked.
  const inspected = (await post(base, '/v1/inspect', { entity: who })).body;
  assert.deepEqual(inspected.semantic.map((m: any) => m.content), [`${who} lives in Lisbon`]);
  const everything = (await post(base, '/v1/inspect', { entity: who, include_superseded: true })).body;
  assert.equal(everything.semantic.length, 3);
}

