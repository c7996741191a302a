// The console's static files at /console on the service's own port: served without a key even
// when keys are set (the page holds no data), with their content types, revalidation caching,
// HEAD, 404 for unknown names and no way out of the folder; the API behind it still wants a key.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_DIR } from '../src/http/operator-routes.js';
import { noneMatchHits } from '../src/http/static-files.js';
import { rawRequest } from './support/raw-http.js';
import { call, get, startTestService, type TestService } from './support/service.js';

let t: TestService;
before(async () => {
  t = await startTestService({ SERVICE_API_KEYS: 'console-key' });
});
after(() => t.close());

const port = () => Number(new URL(t.base).port);

test('the build put the console files beside the compiled server', () => {
  assert.ok(readdirSync(CONSOLE_DIR).includes('index.html'), `${CONSOLE_DIR} holds index.html`);
});

test('/console/ serves index.html without a key; /console redirects to it', async () => {
  const page = await get(t.base, '/console/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.body, /<html/i);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const bare = await fetch(`${t.base}/console`, { redirect: 'manual' });
  assert.equal(bare.status, 308);
  assert.equal(new URL(bare.headers.get('location') ?? '', `${t.base}/console`).pathname, '/console/');
});

test('each file type gets its content type', async () => {
  const expected: Record<string, RegExp> = { '.js': /^text\/javascript/, '.css': /^text\/css/, '.html': /^text\/html/ };
  const names = readdirSync(CONSOLE_DIR, { recursive: true, encoding: 'utf8' });
  let checked = 0;
  for (const name of names) {
    const type = expected[name.slice(name.lastIndexOf('.'))];
    if (!type) continue;
    const reply = await fetch(`${t.base}/console/${name}`);
    assert.equal(reply.status, 200, name);
    assert.match(reply.headers.get('content-type') ?? '', type, name);
    await reply.arrayBuffer();
    checked++;
  }
  assert.ok(checked >= 3, 'html, css and js files are served');
});

test('an unchanged file revalidates as a bodiless 304', async () => {
  const first = await fetch(`${t.base}/console/index.html`);
  const etag = first.headers.get('etag');
  await first.text();
  assert.match(etag ?? '', /^".+"$/);
  const again = await fetch(`${t.base}/console/index.html`, { headers: { 'if-none-match': etag! } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  const changed = await fetch(`${t.base}/console/index.html`, { headers: { 'if-none-match': '"other"' } });
  assert.equal(changed.status, 200);
  await changed.text();
  // Weak comparison (RFC 9110 §13.1.2): a weak tag, `*` and a list holding the tag all match.
  for (const header of [`W/${etag}`, '*', `"other", W/${etag}`, `"a",${etag}`]) {
    const response = await fetch(`${t.base}/console/index.html`, { headers: { 'if-none-match': header } });
    assert.equal(response.status, 304, header);
    await response.text();
  }
});

test('If-None-Match: weak comparison of each listed tag, * matches any', () => {
  const tag = '"abc"';
  assert.equal(noneMatchHits(tag, tag), true);
  assert.equal(noneMatchHits('W/"abc"', tag), true);
  assert.equal(noneMatchHits(' "x" , W/"abc" ', tag), true);
  assert.equal(noneMatchHits('*', tag), true);
  assert.equal(noneMatchHits('', tag), false);
  assert.equal(noneMatchHits('"abcd", W/"ab"', tag), false);
  assert.equal(noneMatchHits('abc', tag), false);
});

test('HEAD answers the headers without a body; other methods are 405', async () => {
  const head = await fetch(`${t.base}/console/index.html`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.match(head.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(await head.text(), '');
  const posted = await call(t.base, 'POST', '/console/index.html', {});
  assert.equal(posted.status, 405);
  assert.equal(posted.body.code, 'METHOD_NOT_ALLOWED');
  assert.equal(posted.headers.get('allow'), 'GET, HEAD');
});

test('unknown files are 404 and no path leaves the folder', async () => {
  const missing = await get(t.base, '/console/nope.js');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.code, 'ROUTE_NOT_FOUND');
  // Sent as raw bytes: fetch would normalise the dots away before they reach the server.
  for (const path of ['/console/../package.json', '/console/%2e%2e/%2e%2e/package.json', '/console/..%2fsrc%2fservice.ts', '/console//etc/passwd']) {
    const { answers } = await rawRequest({ port: port(), head: `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, expectAnswers: 1 });
    assert.equal(answers[0]?.status, 404, path);
    assert.doesNotMatch(answers[0].body, /"name"|import /, path);
  }
});

test('the API behind the console still needs the key', async () => {
  assert.equal((await get(t.base, '/v1/stats')).status, 401);
  assert.equal((await get(t.base, '/v1/stats', { authorization: 'Bearer console-key' })).status, 200);
});

test('the console never turns text into markup', () => {
  // Memory text is user data: it may only reach the page as Text nodes (see js/dom.js).
  const scripts = readdirSync(CONSOLE_DIR, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'));
  assert.ok(scripts.length >= 5);
  for (const name of scripts) {
    const code = readFileSync(join(CONSOLE_DIR, name), 'utf8');
    assert.doesNotMatch(code, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|eval\(|new Function/, name);
  }
});
