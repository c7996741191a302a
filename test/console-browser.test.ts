// The memory console end to end, in headless Chromium (Debian's `chromium`, driven by
// playwright-core) against a real service with keys set: sign in with the key, find an entity,
// read its memories, run a recall and read the explanation, delete the entity and restore it,
// each change through its confirmation. Skips, saying why, when the browser cannot start.
// With CONSOLE_SCREENSHOTS=<folder> it also saves the README's screenshots there.
import { after, afterEach, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { get, post, startTestService, type TestService } from './support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'console-e2e-key';
const auth = { authorization: `Bearer ${KEY}` };
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;

// Launched before the suite is declared, so a missing or broken browser skips it with the reason.
const launched: Browser | Error = await chromium
  .launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'], timeout: 20_000 })
  .catch((error: Error) => error);
const cannotStart = launched instanceof Error
  ? `headless Chromium cannot start (${CHROMIUM}; apt-get install chromium): ${launched.message.split('\n')[0]}`
  : false;
// CI installs the browser, so there a launch failure is a failure, not a skip.
if (cannotStart && process.env.CONSOLE_BROWSER_REQUIRED === '1') throw new Error(`CONSOLE_BROWSER_REQUIRED is set but ${cannotStart}`);

describe('memory console in Chromium', { skip: cannotStart }, () => {
  const browser = launched as Browser;
  let t: TestService;
  let page: Page;
  /** Routes and recall fields the service documents: steps needing a route it lacks skip. */
  const pageErrors: string[] = [];
  let documented: { paths: Record<string, Record<string, unknown>>; recallFields: string[] };

  before(async () => {
    t = await startTestService({ SERVICE_API_KEYS: KEY, SERVICE_EMBEDDER: 'hash' });
    await seed(t.base);
    const openapi = (await get(t.base, '/v1/openapi.json', auth)).body;
    const recallRef: string = openapi.paths['/v1/recall'].post.requestBody.content['application/json'].schema.$ref ?? '';
    const recallSchema = recallRef ? openapi.components.schemas[recallRef.split('/').pop()!] : openapi.paths['/v1/recall'].post.requestBody.content['application/json'].schema;
    documented = { paths: openapi.paths, recallFields: Object.keys(recallSchema.properties ?? {}) };
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    page.setDefaultTimeout(10_000);
    // A script error in the page fails the step that caused it, with the browser's message.
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), [], 'no script error in the page');
  });
  after(() => t?.close());

  /** Skips a step the service does not offer yet (the route is not in its OpenAPI document). */
  const needs = (context: TestContext, path: string, method: string): boolean => {
    if (documented.paths[path]?.[method]) return true;
    context.skip(`the service does not document ${method.toUpperCase()} ${path} yet`);
    return false;
  };

  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Cut below the content (no empty page in the picture), at most one screen high.
    const box = (await page.locator('main').boundingBox())!;
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), clip: { x: 0, y: 0, width: 1100, height: Math.min(760, Math.ceil(box.y + box.height) + 16) } });
  };

  test('asks for the key, refuses a wrong one, keeps the right one in the session only', async () => {
    await page.goto(`${t.base}/console/`);
    const key = page.getByLabel('API key');
    await key.fill('not-the-key');
    await page.getByRole('button', { name: 'Open console' }).click();
    await page.getByRole('alert').filter({ hasText: /refused/ }).waitFor();
    assert.ok(await page.locator('#tabs').isHidden());
    await key.fill(KEY);
    await page.getByRole('button', { name: 'Open console' }).click();
    await page.getByRole('navigation', { name: 'Console sections' }).waitFor();
    assert.equal(await page.evaluate("sessionStorage.getItem('memory-runtime.api-key')"), KEY);
    assert.equal(await page.evaluate('localStorage.length'), 0);
    assert.equal(await page.evaluate('document.cookie'), '');
    // A reload keeps the session: no second prompt.
    await page.reload();
    await page.getByRole('navigation', { name: 'Console sections' }).waitFor();
    assert.ok(await page.locator('#sign-in').isHidden());
  });

  test('a malformed fragment opens the entities list, not the sign-in form', async () => {
    await page.goto(`${t.base}/console/#stats`);
    await page.goto(`${t.base}/console/#entity/%E0%A4%A`);
    await page.reload();
    await page.locator('#entities-title, h2', { hasText: /entities/i }).first().waitFor();
    assert.ok(await page.locator('#sign-in').isHidden());
    assert.ok(await page.locator('#tabs').isVisible());
  });

  test('finds an entity by searching the list', async (context) => {
    if (!needs(context, '/v1/entities', 'get')) return;
    await page.goto(`${t.base}/console/#entities`);
    const results = page.locator('#entity-results');
    await results.getByText('1–3 of 3').waitFor();
    // Case-insensitive substring: alice and malika, not bob.
    await page.getByLabel('Search entities').fill('ALI');
    await results.getByText('1–2 of 2').waitFor();
    assert.deepEqual(await results.getByRole('link').allInnerTexts(), ['alice', 'malika']);
    const link = results.getByRole('link', { name: 'alice' });
    await shoot('entities');
    await link.click();
    await page.getByRole('heading', { level: 2, name: 'alice' }).waitFor();
  });

  test("shows an entity's facts with confidence, and its turns grouped by episode in order", async () => {
    await page.goto(`${t.base}/console/#entity/alice`);
    const semantic = page.locator('[data-type=semantic]');
    await semantic.getByText('Alice lives in Berlin').waitFor();
    assert.match(await semantic.innerText(), /confidence 0\.9/);
    assert.match(await semantic.innerText(), /tier 1 \(rules or direct\)/, 'each card says what wrote the memory');
    const episodes = page.locator('[data-type=episodic] .episode');
    assert.equal(await episodes.count(), 2);
    for (let i = 0; i < 2; i++) {
      const turns = await episodes.nth(i).locator('li .content').allInnerTexts();
      assert.equal(turns.length, 3);
      const session = /session (\d)/.exec(turns[0])![1];
      // Each turn says who said it (its role) before what was said.
      assert.deepEqual(turns.map((text) => text.replace(/^#\d+\s*/, '')), [0, 1, 2].map((n) => `user alice: session ${session} turn ${n}`));
    }
    // Memory text is data: markup in it is shown as text, never run or parsed.
    await page.locator('[data-type=semantic]').getByText('<img src=x onerror=alert(1)> likes <b>tags</b>').waitFor();
    assert.equal(await page.locator('main img, main b').count(), 0);
    await shoot('entity');
  });

  test('runs a recall in the playground', async () => {
    await page.goto(`${t.base}/console/#recall`);
    await page.getByLabel('Query').fill('where does alice live');
    await page.getByRole('button', { name: 'Recall' }).click();
    const first = page.locator('#recall-results .result').first();
    await first.getByText('Alice lives in Berlin').waitFor();
    assert.match(await first.innerText(), /^1\.\s*Alice lives in Berlin\s+semantic · score/);
  });

  test('shows why each result ranked: signals, ranks and contributions', async (context) => {
    if (!documented.recallFields.includes('explain')) {
      context.skip('the service does not document recall `explain` yet');
      return;
    }
    const results = page.locator('#recall-results .result');
    await results.first().locator('table.explain').waitFor();
    const count = await results.count();
    assert.ok(count >= 1);
    for (let i = 0; i < count; i++) {
      const table = results.nth(i).locator('table.explain');
      const rows = table.locator('tbody tr');
      const signals = await Promise.all((await rows.all()).map((row) => row.getAttribute('data-signal')));
      assert.ok(signals.length >= 1);
      for (const signal of signals) assert.ok(['lexical', 'vector', 'feedback', 'entity', 'adjacent', 'session', 'tie_break', 'time'].includes(String(signal)), String(signal));
      // The caption's fused score is the sum of the contributions shown.
      const score = Number(/fused score ([\d.]+)/.exec(await table.locator('caption').innerText())![1]);
      const contributions = await table.locator('tbody tr td:nth-child(5)').allInnerTexts();
      const sum = contributions.reduce((total, text) => total + Number(text), 0);
      assert.ok(Math.abs(sum - score) < 0.001 * contributions.length + 1e-4, `${sum} vs ${score}`);
    }
    await shoot('recall');
  });

  test('deletes an entity only after confirming', async () => {
    await page.goto(`${t.base}/console/#entity/alice`);
    const dialog = page.locator('dialog#confirm');
    await page.getByRole('button', { name: 'Delete entity…' }).click();
    await dialog.waitFor();
    // Focus moves to the dialog, which names its message as its description.
    assert.equal(await page.evaluate('document.activeElement?.id'), 'confirm');
    const described = await page.evaluate("document.getElementById(document.activeElement.getAttribute('aria-describedby'))?.textContent");
    assert.match(String(described), /Every memory of "alice" is removed/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Delete entity…', 'focus is back on the button that opened it');
    assert.equal(await memoryCount(t.base, 'alice'), 8, 'cancel keeps every memory');
    await page.getByRole('button', { name: 'Delete entity…' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted 8 memories.').waitFor();
    assert.equal(await memoryCount(t.base, 'alice'), 0);
  });

  test('deletes entities named "." and ".." (dot segments a URL path cannot carry)', async () => {
    const dialog = page.locator('dialog#confirm');
    for (const name of ['.', '..']) {
      assert.equal((await post(t.base, '/v1/remember', { entity: name, fact: `a fact about ${name}` }, auth)).status, 201);
      await page.goto(`${t.base}/console/#entity/${name}`);
      await page.getByRole('heading', { level: 2, name }).waitFor();
      await page.getByRole('button', { name: 'Delete entity…' }).click();
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('Deleted 1 memories.').waitFor();
      assert.equal(await memoryCount(t.base, name), 0, name);
    }
  });

  test('restores the deleted entity from its snapshot after confirming', async (context) => {
    if (!needs(context, '/v1/snapshots', 'get') || !needs(context, '/v1/snapshots/{snapshot_id}/restore', 'post')) return;
    await page.goto(`${t.base}/console/#snapshots`);
    const restore = page.getByRole('button', { name: /^Restore alice/ });
    await restore.waitFor();
    await shoot('snapshots');
    const dialog = page.locator('dialog#confirm');
    await restore.click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await memoryCount(t.base, 'alice'), 0, 'cancel restores nothing');
    await restore.click();
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await page.locator('#restore-outcome').getByText(/Restored [1-9]\d* memories of alice \(0 already present\)/).waitFor();
    const back = await post(t.base, '/v1/inspect', { entity: 'alice' }, auth);
    assert.equal(back.status, 200);
    assert.equal(back.body.semantic.length, 2);
    assert.equal(back.body.episodic.length, 6);
    const recalled = await post(t.base, '/v1/recall', { query: 'where does alice live' }, auth);
    assert.ok(recalled.body.memories.some((m: { content: string }) => m.content === 'Alice lives in Berlin'));
  });

  test("a snapshot of another namespace cannot be restored from here: its button is disabled, saying why", async (context) => {
    if (!needs(context, '/v1/snapshots', 'get')) return;
    const id = '0e15e111-0000-4000-8000-000000000000';
    writeFileSync(join(t.dir, 'snapshots', `${id}.json`), JSON.stringify({
      format_version: 1, snapshot_id: id, captured_at: '2026-01-01T00:00:00.000Z', namespace: 'elsewhere',
      entity: { id: 'e-ghost', name: 'ghost', kind: 'user' }, embedder: null, memories: [],
    }));
    await page.goto(`${t.base}/console/#snapshots`);
    await page.reload();
    const button = page.getByRole('button', { name: /^Restore ghost/ });
    await button.waitFor();
    assert.equal(await button.isDisabled(), true);
    const why = await button.getAttribute('aria-describedby');
    assert.match(await page.locator(`[id="${why}"]`).innerText(), /namespace "elsewhere".*serves "default"/);
    assert.equal(await page.getByRole('button', { name: /^Restore alice/ }).first().isDisabled(), false);
  });

  test('says when an entity has more memories than shown', async () => {
    for (let i = 0; i < 50; i++) assert.equal((await post(t.base, '/v1/remember', { entity: 'chatty', fact: `chatty fact number ${i}` }, auth)).status, 201);
    await page.goto(`${t.base}/console/#entity/chatty`);
    await page.getByRole('note').getByText(/Showing the 50 most recent memories/).waitFor();
    await page.goto(`${t.base}/console/#entity/bob`);
    await page.getByRole('heading', { level: 2, name: 'bob' }).waitFor();
    await page.locator('section.memories').first().waitFor();
    assert.equal(await page.getByRole('note').count(), 0, 'no notice for a whole list');
  });

  test('shows a damaged snapshot as damaged: no made-up date or counts, no restore', async (context) => {
    if (!needs(context, '/v1/snapshots', 'get')) return;
    const id = '0badf11e-0000-4000-8000-000000000000';
    writeFileSync(join(t.dir, 'snapshots', `${id}.json`), '{ not json');
    await page.goto(`${t.base}/console/#snapshots`);
    await page.reload(); // the page may already show #snapshots (same fragment: no navigation)
    const row = page.locator(`tr[data-snapshot="${id}"]`);
    await row.waitFor();
    const text = await row.innerText();
    assert.doesNotMatch(text, /1970|undefined|null|NaN/);
    assert.equal(await row.locator('td').first().innerText(), '—');
    assert.equal(await row.getByRole('button').count(), 0);
  });

  test('shows live stats and a latency chart from /metrics', async () => {
    await page.goto(`${t.base}/console/#stats`);
    await page.locator('.tile', { hasText: 'entities' }).waitFor();
    // The chart's first point needs two scrapes (3 s apart): latency between them.
    await page.locator('figure.chart figcaption', { hasText: /API requests, p50/ }).waitFor({ timeout: 15_000 });
    assert.ok(await page.locator('figure.chart circle.dot.p50').count() >= 1, 'a point on the chart');
    if (SCREENSHOTS) {
      // For the picture only: some recall traffic over a few scrapes, so the chart has a line.
      const until = Date.now() + 10_000;
      while (Date.now() < until) await post(t.base, '/v1/recall', { query: 'where does alice live' }, auth);
      await page.waitForTimeout(3_500);
    }
    assert.ok(await page.locator('table.list code', { hasText: '/v1/stats' }).count() >= 1);
    await shoot('stats');
  });
});

/** The entity's active memories (an entity left without any may be 404 or empty). */
describe('memory console without keys', { skip: cannotStart }, () => {
  test('opens without asking for a key', async () => {
    const open = await startTestService({ SERVICE_EMBEDDER: 'hash' });
    const page = await (launched as Browser).newPage();
    try {
      await page.goto(`${open.base}/console/#stats`);
      await page.locator('.tile', { hasText: 'entities' }).waitFor({ timeout: 10_000 });
      assert.ok(await page.locator('#sign-in').isHidden());
      assert.ok(await page.locator('#sign-out').isHidden(), 'no key to forget');
    } finally {
      await page.close();
      await open.close();
    }
  });
});

/**
 * Behind a proxy every browser shares one address with the agents: merely opening the console must
 * not count as a failed sign-in, or a few fresh tabs lock the agents out (429) for a minute.
 */
describe('memory console and the auth-failure limiter', { skip: cannotStart }, () => {
  test('opening the console without a key is not a failed sign-in', async () => {
    const limited = await startTestService({ SERVICE_API_KEYS: KEY, SERVICE_EMBEDDER: 'hash', SERVICE_AUTH_FAILURE_LIMIT: '3' });
    try {
      for (let i = 0; i < 4; i++) {
        const context = await (launched as Browser).newContext();
        const page = await context.newPage();
        await page.goto(`${limited.base}/console/#stats`);
        await page.getByLabel('API key').waitFor({ timeout: 10_000 });
        assert.equal(await page.locator('#key-error').innerText(), '', 'a fresh console shows no error');
        await context.close();
      }
      assert.equal((await get(limited.base, '/v1/stats', auth)).status, 200, 'an agent with a valid key is still served');
      // A wrong key typed into the console does count (the limiter still guards guessing).
      const context = await (launched as Browser).newContext();
      const page = await context.newPage();
      await page.goto(`${limited.base}/console/`);
      for (let i = 0; i < 3; i++) {
        await page.getByLabel('API key').fill(`wrong-${i}`);
        await page.getByRole('button', { name: 'Open console' }).click();
        await page.getByRole('alert').filter({ hasText: /refused/ }).waitFor();
        await page.locator('#key-error').evaluate((node) => { node.textContent = ''; });
      }
      await context.close();
      assert.equal((await get(limited.base, '/v1/stats', auth)).status, 429);
    } finally {
      await limited.close();
    }
  });
});

after(async () => {
  if (!(launched instanceof Error)) await launched.close();
});

async function memoryCount(base: string, entity: string): Promise<number> {
  const r = await post(base, '/v1/inspect', { entity, limit: 1000 }, auth);
  if (r.status === 404) return 0;
  assert.equal(r.status, 200);
  return r.body.semantic.length + r.body.episodic.length + r.body.procedural.length;
}

async function seed(base: string): Promise<void> {
  const remember = (entity: string, fact: string, confidence = 0.9) => post(base, '/v1/remember', { entity, fact, confidence }, auth);
  await remember('alice', 'Alice lives in Berlin');
  await remember('alice', '<img src=x onerror=alert(1)> likes <b>tags</b>', 0.6);
  await remember('bob', 'Bob works at the harbour');
  await remember('malika', 'Malika prefers tea over coffee');
  for (const session of [0, 1]) {
    const { body } = await post(base, '/v1/episodes/start', { participants: ['alice'] }, auth);
    for (let turn = 0; turn < 3; turn++) {
      await post(base, `/v1/episodes/${body.episode_id}/message`, { role: 'user', content: `alice: session ${session} turn ${turn}` }, auth);
    }
  }
}
