// The console's views of time (issue 26) in headless Chromium against a real service: an entity's
// facts with when they held, each superseded one marked with a link to what replaced it, two facts
// in conflict flagged on both cards, turns with who said them; a memory's history (its chain in
// time order, this one marked, its life events); the episodes view (participants, outcome, times,
// the participant filter). Skips, saying why, when the browser cannot start (as console-browser).
// With CONSOLE_SCREENSHOTS=<folder> it also saves docs/memory-console.md's pictures of these views.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { post, startTestService, type TestService } from './support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const T2021 = '2021-03-01T09:00:00Z';
const T2022 = '2022-03-01T09:00:00Z';
const T2023 = '2023-03-01T09:00:00Z';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;

const launched: Browser | Error = await chromium
  .launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'], timeout: 20_000 })
  .catch((error: Error) => error);
const cannotStart = launched instanceof Error ? `headless Chromium cannot start (${CHROMIUM}): ${launched.message.split('\n')[0]}` : false;
if (cannotStart && process.env.CONSOLE_BROWSER_REQUIRED === '1') throw new Error(`CONSOLE_BROWSER_REQUIRED is set but ${cannotStart}`);

describe('console views of time', { skip: cannotStart }, () => {
  const browser = launched as Browser;
  let t: TestService;
  let page: Page;
  const pageErrors: string[] = [];
  const ids: Record<string, string> = {};

  before(async () => {
    t = await startTestService({ SERVICE_EMBEDDER: 'hash' });
    const remember = async (name: string, fact: string, validFrom: string) => {
      const r = await post(t.base, '/v1/remember', { entity: 'tina', fact, valid_from: validFrom });
      assert.equal(r.status, 201);
      ids[name] = r.body.id;
    };
    await remember('berlin', 'Tina lives in Berlin', T2021);
    await remember('madrid', 'Tina lives in Madrid', T2022);
    await remember('lisbon', 'Tina lives in Lisbon', T2023);
    await remember('acme', 'Tina works at Acme', T2022);
    await remember('globex', 'Tina works at Globex', T2022);
    const imported = await post(t.base, '/v1/episodes/import', {
      participants: ['tina', 'helper'], started_at: '2023-05-08T10:00:00Z', outcome: 'success',
      messages: [{ role: 'user', content: 'Can you book the train?' }, { role: 'assistant', content: 'Booked the 9:15 train.' }],
    });
    assert.equal(imported.status, 201);
    ids.imported = imported.body.episode_id;
    ids.open = (await post(t.base, '/v1/episodes/start', { participants: ['otto'] })).body.episode_id;
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), [], 'no script error in the page');
  });
  after(async () => {
    await browser.close();
    await t?.close();
  });

  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    const box = (await page.locator('main').boundingBox())!;
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), clip: { x: 0, y: 0, width: 1100, height: Math.min(760, Math.ceil(box.y + box.height) + 16) } });
  };
  const card = (id: string) => page.locator(`[data-type] li.card[data-memory="${id}"]`);

  test('an entity page: facts with their times, superseded ones marked with what replaced them, conflicts flagged', async () => {
    await page.goto(`${t.base}/console/#entity/tina`);
    await card(ids.lisbon).waitFor();
    // Lisbon is current; Madrid held from 2022 until Lisbon, and links to it; Berlin links to Madrid.
    assert.equal(await card(ids.lisbon).getAttribute('class'), 'card');
    assert.match(await card(ids.lisbon).innerText(), /since .*2023/);
    for (const [old, next] of [['berlin', 'madrid'], ['madrid', 'lisbon']]) {
      const superseded = card(ids[old]);
      assert.match(String(await superseded.getAttribute('class')), /\bsuperseded\b/);
      assert.match(await superseded.innerText(), /held .*\d{4}.* – .*\d{4}/);
      const link = superseded.locator('.superseded-note a');
      assert.equal(await link.innerText(), `"Tina lives in ${next[0].toUpperCase()}${next.slice(1)}"`);
      assert.equal(await link.getAttribute('href'), `#memory/${ids[next]}`);
    }
    assert.match(await page.locator('[data-type=semantic] h3').innerText(), /\(5; 2 superseded, 2 in conflict\)/);
    // Acme and Globex from the same moment: each card names the other.
    for (const [one, other] of [['acme', 'globex'], ['globex', 'acme']]) {
      const flagged = card(ids[one]);
      assert.match(String(await flagged.getAttribute('class')), /\bconflict\b/);
      assert.equal(await flagged.locator('.conflict-note a').getAttribute('href'), `#memory/${ids[other]}`);
    }
    assert.equal(await page.locator('li.card.conflict').count(), 2, 'the chain is no conflict');
    // Turns say who said them, and when.
    const turns = page.locator(`[data-type=episodic] .episode[data-episode="${ids.imported}"] li.card`);
    assert.deepEqual(await turns.locator('.speaker').allInnerTexts(), ['user', 'assistant']);
    assert.match(await turns.first().innerText(), /said .*2023/);
    await shoot('entity-time');
  });

  test("a superseded fact's link opens the history of what replaced it: the chain in time order, this one marked", async () => {
    await page.goto(`${t.base}/console/#entity/tina`);
    await card(ids.berlin).locator('.superseded-note a').click();
    await page.getByRole('heading', { level: 2, name: 'Memory history' }).waitFor();
    assert.equal(new URL(page.url()).hash, `#memory/${ids.madrid}`);
    const chain = page.locator('#memory-chain ol.chain li');
    await chain.first().waitFor();
    assert.deepEqual(await chain.evaluateAll((items) => items.map((li) => li.getAttribute('data-memory'))), [ids.berlin, ids.madrid, ids.lisbon]);
    assert.equal(await page.locator('#memory-chain li[aria-current="true"]').getAttribute('data-memory'), ids.madrid);
    assert.match(await chain.nth(2).innerText(), /current/);
    assert.match(await chain.nth(0).innerText(), /replaced by "Tina lives in Madrid"/);
    const events = await page.locator('#memory-events tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-event')));
    assert.deepEqual(events.filter((e) => e !== 'reinforced'), ['superseded', 'stored']);
    assert.match(await page.locator('#memory-shown li.card').innerText(), /Superseded .* by "Tina lives in Lisbon"/);
    await shoot('history');
    // Along the chain: the oldest value's own history.
    await chain.nth(0).getByRole('link').click();
    await page.locator(`#memory-chain li[aria-current="true"][data-memory="${ids.berlin}"]`).waitFor();
    assert.equal(await page.locator('#tabs a[aria-current="page"]').innerText(), 'Entities');
  });

  test('an unknown memory id says it is not found', async () => {
    await page.goto(`${t.base}/console/#memory/00000000-0000-4000-8000-000000000000`);
    await page.getByRole('alert').filter({ hasText: /not found/ }).waitFor();
  });

  test('the episodes view: participants, outcome and times, newest first; filtered by a participant', async () => {
    await page.goto(`${t.base}/console/#episodes`);
    const rows = page.locator('#episode-results tbody tr');
    await rows.first().waitFor();
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-episode'))), [ids.open, ids.imported]);
    const imported = page.locator(`tr[data-episode="${ids.imported}"] td`);
    const cells = await imported.allInnerTexts();
    assert.match(cells[0], /2023/);
    assert.equal(cells[1], 'tina, helper');
    assert.deepEqual(cells.slice(2, 4), ['2', 'success']);
    assert.doesNotMatch(cells[4], /not ended/);
    assert.deepEqual((await page.locator(`tr[data-episode="${ids.open}"] td`).allInnerTexts()).slice(1, 5), ['otto', '0', '—', 'not ended']);
    await shoot('episodes');
    await page.getByLabel('Participant').fill('otto');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('heading', { level: 2, name: 'Episodes of otto' }).waitFor();
    await page.locator('#episode-results .pager').getByText('1–1 of 1').waitFor();
    // From an entity's page, its own episodes; a participant's name opens its page.
    await page.goto(`${t.base}/console/#entity/tina`);
    await page.getByRole('link', { name: 'Episodes', exact: true }).last().click();
    await page.getByRole('heading', { level: 2, name: 'Episodes of tina' }).waitFor();
    await page.locator(`tr[data-episode="${ids.imported}"]`).getByRole('link', { name: 'helper' }).click();
    await page.getByRole('heading', { level: 2, name: 'helper' }).waitFor();
  });
});
