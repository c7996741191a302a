// A refusal of one input field says which field as data (FieldFault), not only in its message:
// remember/batch names a refused item's field from it (facts[3].valid_from), where it once parsed
// the validator's text. Each refusal here is checked for its path and reason, and the message
// keeps saying the same as the data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileValidator } from '../src/shared/validation.js';
import { ImportEpisodeBody, RememberBody } from '../src/shared/schemas.js';
import { eventTimeMs, recallTime } from '../src/shared/event-time.js';
import { ServiceError } from '../src/shared/errors.js';

const refusal = (run: () => unknown): ServiceError => {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    return error;
  }
  assert.fail('expected a refusal');
};

test('the validator reports the field at fault as a path from the validated value', () => {
  const item = compileValidator(RememberBody, 'item');
  const cases: [unknown, string, string | RegExp, string][] = [
    [{ entity: 'a', fact: 'b', valid_from: 'last May' }, 'valid_from', /must match/, 'INVALID_VALUE'],
    [{ entity: 'a', fact: 'b', confidence: 2 }, 'confidence', /<= 1|less/, 'INVALID_VALUE'],
    [{ entity: 'a', fact: 7 }, 'fact', /string/, 'MALFORMED_BODY'],
    [{ entity: 'a' }, 'fact', 'missing (required)', 'MALFORMED_BODY'],
    [{}, 'entity', 'missing (required)', 'MALFORMED_BODY'],
    [{ entity: 'a\ud800', fact: 'b' }, 'entity', /not well-formed Unicode/, 'INVALID_VALUE'],
  ];
  for (const [value, path, reason, code] of cases) {
    const error = refusal(() => item.parse(value));
    assert.equal(error.code, code, JSON.stringify(value));
    assert.equal(error.fault?.path, path, JSON.stringify(value));
    if (typeof reason === 'string') assert.equal(error.fault?.reason, reason);
    else assert.match(error.fault!.reason, reason);
    if (!/missing/.test(error.message)) assert.equal(error.message, `${path}: ${error.fault!.reason}`);
  }
  // Nested: the path goes through arrays and objects; the message names it from the root.
  const nested = refusal(() => compileValidator(ImportEpisodeBody).parse({
    participants: ['a'], messages: [{ role: 'user', content: 'x' }, { role: 'user', content: 'y', occurred_at: 'May 5th' }],
  }));
  assert.equal(nested.fault?.path, 'messages[1].occurred_at');
  assert.ok(nested.message.startsWith('messages[1].occurred_at: '), nested.message);
  // The whole value of the wrong type: the path is empty (the value itself).
  assert.equal(refusal(() => compileValidator(RememberBody, 'item').parse(42)).fault?.path, '');
});

test('a time the calendar lacks names its field as data too', () => {
  const error = refusal(() => eventTimeMs('valid_from', '2023-02-30T10:00:00Z'));
  assert.deepEqual([error.code, error.fault?.path], ['INVALID_VALUE', 'valid_from']);
  assert.equal(error.message, `valid_from: ${error.fault!.reason}`);
  const window = refusal(() => recallTime({ include_superseded: false, since: '2023-02-01T00:00:00Z', until: '2022-01-01T00:00:00Z' }, Date.now()));
  assert.equal(window.fault?.path, 'since');
});
