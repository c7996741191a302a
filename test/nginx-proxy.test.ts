// The documented deployment for what this uWS build cannot answer itself (HTTP/1.0 requests,
// malformed request lines, NUL bytes in headers: uWS drops them silently): a real nginx from
// Debian in front of the service, configured as the README says (proxy_http_version 1.1). The
// nginx runs as a private instance — own prefix, config and pid file, a loopback port.
// Skipped with a message when nginx is not installed (.ci/run installs it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { rawRequest } from './support/raw-http.js';
import { get, startTestService, tempDir, type TestService } from './support/service.js';
import { exited } from './support/process.js';

const hasNginx = spawnSync('nginx', ['-v']).status === 0;
const SKIP = hasNginx ? false : 'nginx is not installed (apt-get install -y nginx); .ci/run installs it';

/** The README's location block, verbatim apart from the upstream port. */
export function proxyConfig(upstreamPort: number): string {
  return `
    location / {
      proxy_pass http://127.0.0.1:${upstreamPort};
      proxy_http_version 1.1;          # uWS answers HTTP/1.1 only; nginx's default is 1.0
      proxy_set_header Connection "";  # keep upstream connections alive
      proxy_set_header Host $host;
      proxy_request_buffering on;      # whole body first: slow uploads cost nginx, not the service
      client_max_body_size 1m;         # = SERVICE_MAX_BODY_BYTES
    }`;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nginx did not listen on ${port}`);
}

describe('behind nginx (proxy_http_version 1.1)', { skip: SKIP }, () => {
  let t: TestService;
  let prefix: string;
  let nginx: ChildProcess;
  let port: number;
  let log = '';
  before(async () => {
    t = await startTestService();
    prefix = tempDir('memrt-nginx-');
    mkdirSync(join(prefix, 'logs'));
    port = await freePort();
    writeFileSync(join(prefix, 'nginx.conf'), `
daemon off;
master_process off;
pid ${join(prefix, 'nginx.pid')};
error_log stderr warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'body')};
  proxy_temp_path ${join(prefix, 'proxy')};
  fastcgi_temp_path ${join(prefix, 'fastcgi')};
  uwsgi_temp_path ${join(prefix, 'uwsgi')};
  scgi_temp_path ${join(prefix, 'scgi')};
  server {
    listen 127.0.0.1:${port};
    server_name localhost;  # $host for requests without a Host header (HTTP/1.0): uWS drops an empty Host
    ${proxyConfig(Number(new URL(t.base).port))}
  }
}
`);
    nginx = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stderr!.on('data', (chunk) => (log += chunk));
    await waitForPort(port);
  });
  after(async () => {
    nginx?.kill('SIGQUIT');
    if (nginx) await exited(nginx);
    await t?.close();
  });

  const send = (head: string, expectAnswers = 1) => rawRequest({ port, head, expectAnswers });

  test('an HTTP/1.0 request is answered (uWS alone drops it silently)', async () => {
    const r = await send('GET /v1/health HTTP/1.0\r\n\r\n');
    assert.equal(r.answers[0]?.status, 200, log);
    assert.equal(JSON.parse(r.answers[0].body).status, 'ok');
  });

  test('malformed requests get nginx 4xx/505 instead of a silent drop', async () => {
    assert.equal((await send('GARBAGE\r\n\r\n')).answers[0]?.status, 400);
    assert.equal((await send('GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n')).answers[0]?.status, 400);
    assert.equal((await send('GET /v1/health HTTP/2.7\r\nHost: x\r\n\r\n')).answers[0]?.status, 505);
  });

  test('pipelined writes are all answered, in order (nginx forwards them one at a time)', async () => {
    const remember = (fact: string) => {
      const body = JSON.stringify({ entity: 'behind-nginx', fact });
      return `POST /v1/remember HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    const r = await send(remember('first') + remember('second'), 2);
    assert.deepEqual(r.answers.map((a) => a.status), [201, 201]);
    assert.deepEqual(r.answers.map((a) => JSON.parse(a.body).content), ['first', 'second']);
    assert.equal((await get(t.base, '/v1/stats')).body.semantic_memories, 2);
  });

  test('an oversized body gets nginx\'s 413, and the service stays reachable', async () => {
    const big = await fetch(`http://127.0.0.1:${port}/v1/remember`, { method: 'POST', body: Buffer.alloc(5_000_000, 0x61) });
    assert.equal(big.status, 413);
    assert.equal((await send('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n')).answers[0]?.status, 200);
  });
});
