// The console forgets the namespace an operator key switched to once that key is refused (issue
// 25 review): the next key — bound to another namespace — signs in on its own namespace instead
// of sending the stale Memory-Namespace and being refused (403). Headless Chromium, as
// console-browser.test.ts; skips, saying why, when the browser cannot start. And the views of time
// (issue 26) keep to the namespace: a key bound to tenant-b sees its own episodes, facts and
// histories only, never tenant-a's (a history of one of tenant-a's memories is not found).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { post, startTestService, type TestService } from './support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const OPERATOR = 'console-ns-operator';
const KEY_B = 'console-ns-key-b';

const launched: Browser | Error = await chromium
  .launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'], timeout: 20_000 })
  .catch((error: Error) => error);
const cannotStart = launched instanceof Error ? `headless Chromium cannot start (${CHROMIUM}): ${launched.message.split('\n')[0]}` : false;
if (cannotStart && process.env.CONSOLE_BROWSER_REQUIRED === '1') throw new Error(`CONSOLE_BROWSER_REQUIRED is set but ${cannotStart}`);

describe('console namespace after a refused key', { skip: cannotStart }, () => {
  const browser = launched as Browser;
  let t: TestService;
  const memories: Record<string, string> = {};
  const episodes: Record<string, string> = {};
  before(async () => {
    t = await startTestService({ SERVICE_API_KEYS: `${OPERATOR},${KEY_B}=tenant-b`, SERVICE_API_KEYS_BINDINGS: 'true', SERVICE_EMBEDDER: 'hash' });
    for (const ns of ['tenant-a', 'tenant-b']) {
      const as = { authorization: `Bearer ${OPERATOR}`, 'memory-namespace': ns };
      const r = await post(t.base, '/v1/remember', { entity: 'maria', fact: `${ns} has maria` }, as);
      assert.equal(r.status, 201);
      // The same names in both: a chain of homes and one imported conversation each.
      for (const [city, at] of [['Berlin', '2021-01-01T00:00:00Z'], ['Madrid', '2022-01-01T00:00:00Z']]) {
        const fact = await post(t.base, '/v1/remember', { entity: 'maria', fact: `Maria lives in ${city} ${ns}-home`, valid_from: at }, as);
        memories[ns] = fact.body.id;
      }
      const imported = await post(t.base, '/v1/episodes/import', {
        participants: ['maria', `${ns}-guest`], started_at: '2023-01-01T00:00:00Z', outcome: 'success',
        messages: [{ role: 'user', content: `${ns} turn of maria` }],
      }, as);
      assert.equal(imported.status, 201);
      episodes[ns] = imported.body.episode_id;
    }
  });
  /** A fresh console page, signed in with `key` (the console's own form). */
  const signedIn = async (key: string) => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${t.base}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Open console' }).click();
    return page;
  };
  after(async () => {
    await browser.close();
    await t?.close();
  });

  test("an operator switched to tenant-a; its key is refused; tenant-b's key then signs in on tenant-b", async () => {
    const page = await signedIn(OPERATOR);
    const select = page.locator('#namespace-switch');
    await select.locator('option[value="tenant-a"]').waitFor({ state: 'attached' });
    await select.selectOption('tenant-a');
    await page.locator('#namespace-name').filter({ hasText: 'tenant-a' }).waitFor();
    // The key stops working (revoked): the next call is refused and the console asks again.
    await page.evaluate("sessionStorage.setItem('memory-runtime.api-key', 'revoked-key')");
    await page.reload();
    await page.getByLabel('API key').waitFor();
    await page.getByLabel('API key').fill(KEY_B);
    await page.getByRole('button', { name: 'Open console' }).click();
    await page.getByRole('navigation', { name: 'Console sections' }).waitFor();
    await page.locator('#namespace-name').filter({ hasText: 'tenant-b' }).waitFor();
    assert.equal(await page.evaluate("sessionStorage.getItem('memory-runtime.namespace')"), null);
    await page.close();
  });

  test("tenant-b's key: the episodes view, an entity's facts and turns, and a history show tenant-b's only", async () => {
    const page = await signedIn(KEY_B);
    await page.getByRole('navigation', { name: 'Console sections' }).waitFor();
    const main = page.locator('main');
    await page.goto(`${t.base}/console/#episodes`);
    await page.locator(`tr[data-episode="${episodes['tenant-b']}"]`).waitFor();
    assert.equal(await page.locator('#episode-results tbody tr').count(), 1);
    assert.doesNotMatch(await main.innerText(), /tenant-a/);
    await page.goto(`${t.base}/console/#episodes/tenant-a-guest`);
    await page.locator('#episode-results').getByText('No episodes.').waitFor();
    await page.goto(`${t.base}/console/#entity/maria`);
    await page.locator(`li.card[data-memory="${memories['tenant-b']}"]`).waitFor();
    await page.locator('[data-type=episodic] li.card').first().waitFor();
    assert.doesNotMatch(await main.innerText(), /tenant-a/);
    // tenant-a's memory, by its id: not found here; tenant-b's own history shows its chain.
    await page.goto(`${t.base}/console/#memory/${memories['tenant-a']}`);
    await page.getByRole('alert').filter({ hasText: /not found/ }).waitFor();
    await page.goto(`${t.base}/console/#memory/${memories['tenant-b']}`);
    await page.locator('#memory-chain li').nth(1).waitFor();
    assert.match(await main.innerText(), /Berlin tenant-b-home/);
    assert.doesNotMatch(await main.innerText(), /tenant-a/);
    await page.close();
  });

  test('an operator switched to tenant-a sees tenant-a\'s episodes, and tenant-b\'s again when switched back', async () => {
    const page = await signedIn(OPERATOR);
    const select = page.locator('#namespace-switch');
    await select.locator('option[value="tenant-a"]').waitFor({ state: 'attached' });
    await page.goto(`${t.base}/console/#episodes`);
    for (const [ns, other] of [['tenant-a', 'tenant-b'], ['tenant-b', 'tenant-a']]) {
      await select.selectOption(ns);
      await page.locator(`tr[data-episode="${episodes[ns]}"]`).waitFor();
      assert.equal(await page.locator(`tr[data-episode="${episodes[other]}"]`).count(), 0);
    }
    await page.close();
  });
});
