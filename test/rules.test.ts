// The tier-1 rule extractor on its own: which statements become which memories.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extractByRules, sentences } from '../src/workers/extraction/rules.js';
import { SYSTEM_PROMPT, userMessage } from '../src/workers/extraction/prompt.js';
import { parseExtraction } from '../src/workers/extraction/parse.js';

const facts = (text: string, role = 'user') =>
  extractByRules([{ role, content: text }], 'Sam', null).map((m) => `${m.memory_type}: ${m.content}`);

describe('tier-1 rules', () => {
  const cases: [string, string][] = [
    ["I'm allergic to shellfish.", 'semantic: Sam is allergic to shellfish'],
    ['I can’t eat gluten.', 'semantic: Sam cannot eat gluten'],
    ["I'm vegetarian.", 'semantic: Sam is vegetarian'],
    ['I am lactose intolerant', 'semantic: Sam is lactose intolerant'],
    ['My name is Samira.', "semantic: Sam's name is Samira"],
    ['Please call me Sami.', 'semantic: Sam prefers to be called Sami'],
    ["I'm 34 years old.", 'semantic: Sam is 34 years old'],
    ['I was born in Accra.', 'semantic: Sam was born in Accra'],
    ['I speak Twi and French.', 'semantic: Sam speaks Twi and French'],
    ['Actually, I live in Lyon now.', 'semantic: Sam lives in Lyon now'],
    ["I'm based in Leeds.", 'semantic: Sam lives in Leeds'],
    ['I just moved to Quito.', 'semantic: Sam lives in Quito'],
    ['I work at a bakery.', 'semantic: Sam works at a bakery'],
    ["I'm going to Japan in May.", 'semantic: Sam is going to Japan in May'],
    ["I'm planning to learn the banjo.", 'semantic: Sam is planning to learn the banjo'],
    ["I'm moving to Oslo next year.", 'semantic: Sam is moving to Oslo next year'],
    ['I really love spicy food!', 'semantic: Sam loves spicy food'],
    ["I don't drink coffee.", 'semantic: Sam does not drink coffee'],
    ["I'd rather take the train.", 'semantic: Sam would rather take the train'],
    ["I've got two cats.", 'semantic: Sam has two cats'],
    ['I own a 2012 Volvo.', 'semantic: Sam owns a 2012 Volvo'],
    ["My wife's name is Ana.", "semantic: Sam's wife's name is Ana"],
    ["Hi! I'm a nurse.", 'semantic: Sam is a nurse'],
    ['To reset the router, hold the button for ten seconds.', 'procedural: To reset the router, hold the button for ten seconds'],
    ['Always back up the database before upgrading.', 'procedural: Always back up the database before upgrading'],
    ['The trick is to preheat the pan.', 'procedural: The trick is to preheat the pan'],
  ];
  for (const [text, expected] of cases) {
    test(JSON.stringify(text), () => assert.deepEqual(facts(text), [expected]));
  }

  test('numbered steps stay whole and become procedures, from either side', () => {
    assert.deepEqual(facts('1. Open settings. 2. Tap Wi-Fi.\n3) Forget the network.', 'assistant'), [
      'procedural: 1. Open settings',
      'procedural: 2. Tap Wi-Fi',
      'procedural: 3) Forget the network',
    ]);
  });

  test('small talk and the agent\'s first-person lines give nothing', () => {
    assert.deepEqual(facts("I'm tired. How are you? That sounds good."), []);
    assert.deepEqual(facts('I live in the cloud. I am an assistant.', 'assistant'), []);
  });

  test('procedural confidence follows the outcome', () => {
    const turn = [{ role: 'user', content: 'First, unplug the modem.' }];
    const confidence = (outcome: 'success' | 'failure' | null) => extractByRules(turn, 'Sam', outcome)[0].confidence;
    assert.ok(confidence('success') > confidence(null));
    assert.ok(confidence('failure') < confidence(null));
  });

  test('subject names and captured text are inserted literally, $ patterns and all', () => {
    const filled = (subject: string, text: string) => extractByRules([{ role: 'user', content: text }], subject, null).map((m) => m.content);
    for (const name of ['A$&B', 'Bob$1', "$'x$`", '$$', '$S', '$<n>', 'Zoë $2 $$1']) {
      assert.deepEqual(filled(name, "I'm allergic to peanuts."), [`${name} is allergic to peanuts`], name);
      assert.deepEqual(filled(name, 'I work at Acme.'), [`${name} works at Acme`], name);
    }
    assert.deepEqual(filled('Sam', 'I live in $S town.'), ['Sam lives in $S town']);
    assert.deepEqual(filled('Sam', 'I work at $1 $& Co.'), ['Sam works at $1 $& Co']);
  });

  test('sentences: lead-ins go, curly apostrophes are straightened', () => {
    assert.deepEqual(sentences('Well, hey, I’m here. OK so I live in Rome'), ["I'm here.", 'I live in Rome']);
  });
});

describe('extraction prompt and reply parsing', () => {
  test('the extraction docs give the system prompt verbatim', () => {
    const readme = readFileSync(new URL('../../docs/recall-extraction-consolidation.md', import.meta.url), 'utf8');
    const documented = SYSTEM_PROMPT.split('\n').map((line) => (line ? `  ${line}` : '')).join('\n');
    assert.ok(readme.includes(documented));
  });

  test('a long transcript keeps its most recent turns', () => {
    const turns = Array.from({ length: 2000 }, (_, i) => ({ role: 'user', content: `turn number ${i} `.repeat(4) }));
    const message = userMessage({ subject: 'Sam', participants: ['Sam'], outcome: null, turns });
    assert.ok(message.length < 26_000);
    assert.match(message, /turn number 1999/);
    assert.doesNotMatch(message, /turn number 0 /);
  });

  test('replies: fenced, bare, or wrapped in prose parse; anything else is garbage', () => {
    const body = '{"memories":[{"content":"Sam surfs","memory_type":"semantic","confidence":0.5}]}';
    for (const reply of [body, '```json\n' + body + '\n```', 'Here: ' + body + ' Done.']) {
      assert.deepEqual(parseExtraction(reply), { ok: true, items: [{ content: 'Sam surfs', memory_type: 'semantic', confidence: 0.5 }], dropped: 0 });
    }
    const many = JSON.stringify({ memories: Array.from({ length: 80 }, (_, i) => ({ content: `fact ${i}`, memory_type: 'semantic', confidence: 1 })) });
    const parsed = parseExtraction(many);
    assert.ok(parsed.ok && parsed.items.length === 50, 'a runaway reply is capped');
    for (const reply of ['', 'no', '[1,2]', '{"memories": "none"}', '{"memories":[{"content":"x"}]}', null]) {
      assert.equal(parseExtraction(reply).ok, false, String(reply));
    }
  });
});
