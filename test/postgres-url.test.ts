// SERVICE_DATABASE_URL and SERVICE_READ_DATABASE_URL: parsed as the `postgres` client parses them
// (several hosts, percent-encoded credentials, query options), refused with a ConfigError naming
// the variable when the client could not use them, handed to the client in a form it reads back
// to the same target, and never shown with their password (logs, CLI output, error messages).
// No server is needed: the client's own parsing (sql.options) is compared without connecting.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import postgres from 'postgres';
import { ConfigError, databaseLabel, loadConfig } from '../src/shared/config.js';
import { parsePostgresUrl, redactPostgresUrls } from '../src/shared/postgres-url.js';
import { runCli } from './support/cli.js';
import { tempDir } from './support/service.js';

const SECRET = 's3cr3t';

/** What the postgres client itself reads from a URL (no connection is opened). */
async function clientReads(url: string) {
  const sql = postgres(url, { onnotice: () => {} });
  const { host, port, user, pass, database, target_session_attrs, ssl, connection } = sql.options as unknown as {
    host: string[]; port: number[]; user: string; pass: string; database: string; target_session_attrs: string | null; ssl: unknown;
    connection: Record<string, unknown>;
  };
  await sql.end();
  return { host, port, user, pass, database, target_session_attrs, ssl, connection };
}

function configOf(url: string, readUrl?: string) {
  return loadConfig({ SERVICE_DATABASE_URL: url, ...(readUrl ? { SERVICE_READ_DATABASE_URL: readUrl } : {}) });
}

describe('parsing as the postgres client does', () => {
  test('one host, default port, user, password and database', async () => {
    const target = parsePostgresUrl(`postgres://memrt:${SECRET}@db.example:6432/memories`);
    assert.deepEqual(target.hosts, [{ host: 'db.example', port: 6432 }]);
    assert.equal(target.user, 'memrt');
    assert.equal(target.password, SECRET);
    assert.equal(target.database, 'memories');
    assert.deepEqual(parsePostgresUrl('postgresql://db/x').hosts, [{ host: 'db', port: 5432 }]);
  });

  test('several hosts: each keeps its own port (the client would give a portless one the first host\'s)', async () => {
    const raw = 'postgres://u@h1:6000,h2,h3:7000/db?target_session_attrs=primary';
    const target = parsePostgresUrl(raw);
    assert.deepEqual(target.hosts, [{ host: 'h1', port: 6000 }, { host: 'h2', port: 5432 }, { host: 'h3', port: 7000 }]);
    const reads = await clientReads(target.url);
    assert.deepEqual(reads.host, ['h1', 'h2', 'h3']);
    assert.deepEqual(reads.port, [6000, 5432, 7000]);
    assert.equal(reads.target_session_attrs, 'primary');
    assert.deepEqual((await clientReads(raw)).port, [6000, 6000, 7000], 'the client alone gets h2 wrong');
  });

  test('percent-encoded user and password, with @ : / % in them, reach the client decoded', async () => {
    const password = 'p@ss:w/rd%?#&=';
    const user = 'me@corp:x';
    const target = parsePostgresUrl(`postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@h1:1,h2:2/db`);
    assert.equal(target.user, user);
    assert.equal(target.password, password);
    const reads = await clientReads(target.url);
    assert.equal(reads.user, user);
    assert.equal(reads.pass, password);
    assert.deepEqual(reads.host, ['h1', 'h2']);
    assert.equal(reads.database, 'db');
  });

  test('a raw @ in the password ends the userinfo at the last @', async () => {
    const target = parsePostgresUrl('postgres://u:p@ss@h:5/db');
    assert.equal(target.password, 'p@ss');
    assert.deepEqual(target.hosts, [{ host: 'h', port: 5 }]);
    assert.equal((await clientReads(target.url)).pass, 'p@ss');
  });

  test('password= in the query is the password (the client would send it to the server as a setting)', async () => {
    const target = parsePostgresUrl(`postgres://u@h/db?password=${encodeURIComponent('a&b=c')}&application_name=fleet`);
    assert.equal(target.password, 'a&b=c');
    assert.deepEqual(target.params, { application_name: 'fleet' });
    const reads = await clientReads(target.url);
    assert.equal(reads.pass, 'a&b=c');
    assert.equal(reads.connection.password, undefined);
    assert.equal(reads.connection.application_name, 'fleet');
    assert.equal((await clientReads('postgres://u@h/db?password=x')).connection.password, 'x', 'the client alone misreads it');
  });

  test('sslmode and target_session_attrs are the client\'s options', async () => {
    const reads = await clientReads(parsePostgresUrl('postgres://u@h/db?sslmode=require&target_session_attrs=prefer-standby').url);
    assert.equal(reads.ssl, 'require');
    assert.equal(reads.target_session_attrs, 'prefer-standby');
    assert.equal((await clientReads(parsePostgresUrl('postgres://u@h/db?sslmode=disable').url)).ssl, false);
  });

  test('the canonical URL parses back to the same target', () => {
    for (const raw of [
      'postgres://h', 'postgres://u@h', `postgres://:${SECRET}@h/db`, 'postgres://u:p%2Fq@h1:1,h2:2/db?sslmode=verify-full&connect_timeout=5',
    ]) {
      const once = parsePostgresUrl(raw);
      const twice = parsePostgresUrl(once.url);
      assert.deepEqual({ ...twice }, { ...once }, raw);
    }
  });
});

describe('URLs the client cannot use are refused, naming the variable', () => {
  const bad: [string, RegExp][] = [
    ['mysql://u@h/db', /postgres:\/\//],
    ['postgres://u@h:abc/db', /port "abc"/],
    ['postgres://u@h:0/db', /port "0"/],
    ['postgres://u@h:70000/db', /port "70000"/],
    ['postgres://u@h:/db', /port ""/],
    ['postgres://u@/db', /no host/],
    ['postgres:///db', /no host/],
    ['postgres://u@h1:1,,h2:2/db', /empty host/],
    ['postgres://u@h1:1,/db', /empty host/],
    ['postgres://u@[::1]:5432/db', /IPv6/],
    ['postgres://u@%2Fvar%2Frun%2Fpostgresql/db', /Unix socket/],
    ['postgres://u@h/my%20db', /database name/],
    ['postgres://u@h/a/b', /one database name/],
    ['postgres://u@h/db?sslmode=sometimes', /sslmode/],
    ['postgres://u@h/db?target_session_attrs=any', /target_session_attrs/],
    ['postgres://u@h/db?connect_timeout=soon', /connect_timeout/],
    ['postgres://u@h/db?host=other', /query parameter host/],
    ['postgres://u@h/db?dbname=other', /query parameter dbname/],
    ['postgres://u@h/db#frag', /fragment/],
    ['postgres://u@h/d b', /white space/],
    [`postgres://u:${SECRET}%zz@h/db`, /percent-encoding/],
    [`postgres://u:${SECRET}/x@h:5/db`, /percent-encode/],
    [`postgres://u:${SECRET}?x@h:5/db`, /percent-encode/],
  ];
  for (const variable of ['SERVICE_DATABASE_URL', 'SERVICE_READ_DATABASE_URL']) {
    test(variable, () => {
      for (const [url, problem] of bad) {
        const env = variable === 'SERVICE_DATABASE_URL' ? { SERVICE_DATABASE_URL: url } : { SERVICE_DATABASE_URL: 'postgres://h/db', SERVICE_READ_DATABASE_URL: url };
        assert.throws(() => loadConfig(env), (error: unknown) => {
          assert.ok(error instanceof ConfigError, url);
          assert.ok(error.message.startsWith(`${variable}: `), error.message);
          assert.match(error.message, problem, url);
          assert.ok(!error.message.includes(SECRET), `no password in: ${error.message}`);
          return true;
        }, url);
      }
    });
  }
});

describe('the password is never shown', () => {
  const passwords = [SECRET, `a@${SECRET}:b`, `${SECRET}/?#`];
  test('databaseLabel (start-up log, CLI messages) of either URL', () => {
    for (const password of passwords) {
      const encoded = encodeURIComponent(password);
      for (const url of [
        `postgres://memrt:${encoded}@h1:5432,h2:5433/db?target_session_attrs=primary`,
        `postgres://memrt@h1/db?password=${encoded}`,
        `postgres://:${encoded}@h1/db`,
      ]) {
        const config = configOf(url, url.replace('h1', 'replica'));
        for (const label of [databaseLabel(config), config.postgres!.readLabel!]) {
          assert.ok(!label.includes(SECRET) && !label.includes(encoded), label);
          assert.match(label, /^postgres:\/\/(memrt)?:\*\*\*@/, label);
        }
      }
    }
    assert.equal(databaseLabel(configOf('postgres://memrt@h1/db')), 'postgres://memrt@h1:5432/db');
  });

  test('redactPostgresUrls, for text holding a URL that may not parse', () => {
    const text = [
      `postgres://u:${SECRET}@h/db`, `postgresql://u:a@${SECRET}@h1:1,h2:2/db`, `postgres://u:${SECRET}/x@h/db`,
      `postgres://u@h/db?sslmode=require&password=${SECRET}`, `postgres://u:${encodeURIComponent(`${SECRET}@:`)}@h/db`,
    ].map((url) => `failed: ${url} (refused)`).join('\n');
    const redacted = redactPostgresUrls(text);
    assert.ok(!redacted.includes(SECRET), redacted);
    assert.equal(redactPostgresUrls('postgres://u@h:1/db and /tmp/memory.db'), 'postgres://u@h:1/db and /tmp/memory.db');
  });

  test('CLI output names the database without its password', async () => {
    const dir = tempDir();
    const env = {
      SERVICE_PATH: `${dir}/memory.db`,
      SERVICE_DATABASE_URL: `postgres://memrt:${encodeURIComponent(`x@${SECRET}:y`)}@127.0.0.1:9/db`,
    };
    // export refuses (the data is in PostgreSQL) and names it; snapshots tries to connect and fails.
    for (const args of [['export', '-o', `${dir}/out.jsonl`], ['snapshots']]) {
      const run = await runCli(args, { env });
      assert.notEqual(run.code, 0, args[0]);
      assert.match(run.stderr, /postgres:\/\/memrt:\*\*\*@127\.0\.0\.1:9\/db/, `${args[0]}: ${run.stderr}`);
      assert.ok(!run.stderr.includes(SECRET) && !run.stdout.includes(SECRET), `${args[0]}: ${run.stderr}`);
    }
    const bad = await runCli(['migrate', '--db', `${dir}/memory.db`, '--to', `postgres://u:${SECRET}@h:99999/db`]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--to .*port "99999"/);
    assert.ok(!bad.stderr.includes(SECRET), bad.stderr);
  });
});
