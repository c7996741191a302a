// The hand-composed access line must be the line pino itself writes for the same fields: same
// keys in the same order, same bindings, same level and message — only the time differs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccessLog } from '../src/http/access-log.js';
import { createLogger } from '../src/shared/logger.js';

function collector(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

const withoutTime = (line: string) => line.replace(/,"time":\d+/, ',"time":T');

test('an access line is byte for byte the line pino writes for the same fields, time aside', () => {
  const out = collector();
  const log = createLogger('info', out);
  const access = new AccessLog(log);
  const cases: [string | undefined, string, string, number, number][] = [
    ['trace-0001', 'GET', '/v1/health', 200, 0.12],
    ['0f8fad5b-d9cb-469f-a165-70867728950e', 'POST', '/v1/episodes/:id/message', 201, 14],
    ['x', 'DELETE', 'unmatched', 499, 0],
    // Not produced by the server (ids are tokens, methods and routes fixed strings), but escaped alike.
    ['a"b\\c', 'GE\nT', '/odd"route', 404, 1.5],
    [undefined, 'HEAD', '/v1/health', 200, Number.NaN],
    // Lone surrogates: pino writes them raw in short strings and escapes them (\ud800) past 100 characters.
    ['\ud800x', 'GET', '/\udfff', 200, 1],
    ['\ud800'.repeat(101), 'GET', `/${'\udfff'.repeat(120)}`, 200, 1],
  ];
  for (const [reqId, method, route, status, ms] of cases) {
    access.write(reqId, method, route, status, ms);
    log.info({ reqId, method, route, status, ms }, 'request');
  }
  assert.equal(out.lines.length, cases.length * 2);
  for (let i = 0; i < cases.length; i++) {
    const [ours, pinos] = [out.lines[2 * i], out.lines[2 * i + 1]];
    assert.equal(withoutTime(ours), withoutTime(pinos));
    assert.match(ours, /,"time":\d+,/);
    const parsed = JSON.parse(ours);
    assert.deepEqual(Object.keys(parsed), ['level', 'time', 'service', ...(cases[i][0] === undefined ? [] : ['reqId']), 'method', 'route', 'status', 'ms', 'msg']);
    assert.equal(parsed.method, cases[i][1]);
    assert.equal(parsed.route, cases[i][2]);
  }
});

test('a child logger keeps its bindings, and a level above info writes no access line', () => {
  const out = collector();
  const child = createLogger('info', out).child({ node: 'n1' });
  new AccessLog(child).write('r1', 'GET', '/v1/health', 200, 1);
  child.info({ reqId: 'r1', method: 'GET', route: '/v1/health', status: 200, ms: 1 }, 'request');
  assert.equal(withoutTime(out.lines[0]), withoutTime(out.lines[1]));
  assert.equal(JSON.parse(out.lines[0]).node, 'n1');

  const quiet = collector();
  new AccessLog(createLogger('warn', quiet)).write('r2', 'GET', '/v1/health', 200, 1);
  assert.deepEqual(quiet.lines, []);
});

test('a logger with a mixin goes through pino itself, so its fields still appear', async () => {
  const { pino } = await import('pino');
  const out = collector();
  const log = pino({ base: { service: 'memory-runtime' }, mixin: () => ({ extra: 1 }) }, out);
  new AccessLog(log).write('r3', 'GET', '/v1/health', 200, 1);
  assert.equal(JSON.parse(out.lines[0]).extra, 1);
  assert.equal(JSON.parse(out.lines[0]).reqId, 'r3');
});

test('loggers pino treats differently (multistream, nestedKey, serializers, logMethod hook, DESC levels) go through pino itself', async () => {
  const { pino } = await import('pino');
  const fields = { reqId: 'r4', method: 'GET', route: '/v1/health', status: 200, ms: 1 };
  const variants: [string, (out: ReturnType<typeof collector>) => import('pino').Logger][] = [
    ['nestedKey', (out) => pino({ nestedKey: 'payload' }, out)],
    ['serializers', (out) => pino({ serializers: { route: (route: string) => route.toUpperCase() } }, out)],
    ['logMethod hook', (out) => pino({ hooks: { logMethod(args, method) { method.apply(this, [{ ...(args[0] as object), hooked: true }, ...args.slice(1)] as never); } } }, out)],
    ['DESC levels', (out) => pino({ levelComparison: 'DESC', level: 'info' }, out) as never],
  ];
  for (const [name, make] of variants) {
    const out = collector();
    const log = make(out);
    new AccessLog(log as never).write(fields.reqId, fields.method, fields.route, fields.status, fields.ms);
    log.info(fields, 'request');
    assert.equal(out.lines.length % 2, 0, name);
    if (out.lines.length) assert.equal(withoutTime(out.lines[0]), withoutTime(out.lines[1]), name);
  }
  // A multistream: the line must reach the streams for its own level only.
  const errors = collector();
  const infos = collector();
  const log = pino({ level: 'info' }, pino.multistream([{ level: 'error', stream: errors }, { level: 'info', stream: infos }]));
  log.error('boom');
  new AccessLog(log as never).write(fields.reqId, fields.method, fields.route, fields.status, fields.ms);
  assert.equal(errors.lines.length, 1);
  assert.equal(infos.lines.length, 2);
  assert.equal(JSON.parse(infos.lines[1]).reqId, 'r4');
});
