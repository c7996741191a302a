// The tier-1 rule extractor on its own: which statements become which memories, who "I" and
// "you" turn out to be, and what is left alone.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extractByRules, MAX_RULE_TEXT_CHARS, turnsWithinBudget, type TranscriptTurn } from '../src/workers/extraction/rules.js';
import { rulesOrNothing } from '../src/workers/extraction/episode.js';
import { voicesOf } from '../src/workers/extraction/speakers.js';
import { firstRecentTurn } from '../src/workers/port/recent-transcript.js';
import { thirdPerson } from '../src/workers/extraction/third-person.js';
import { SYSTEM_PROMPT, userMessage } from '../src/workers/extraction/prompt.js';
import { parseExtraction } from '../src/workers/extraction/parse.js';
import type { EntityRecord } from '../src/shared/schemas.js';
import { isMalformed } from '../bench/extraction/scoring.js';
import { buildCorpus } from '../bench/recall-quality/corpus.js';

const person = (name: string, kind: EntityRecord['kind'] = 'user'): EntityRecord => ({ id: name, name, kind });
const MARIA = [person('maria'), person('helper', 'agent')];

const facts = (turns: TranscriptTurn[], participants = MARIA) =>
  extractByRules(turns, participants, null).map((m) => `${m.memory_type}: ${m.content}`);
const said = (content: string, role = 'user', participants = MARIA) => facts([{ role, content }], participants);

describe('tier-1 rules: the statements from the issue', () => {
  test('a move keeps its time; the clause about something else is not a fact about the speaker', () => {
    assert.deepEqual(said('I moved to Lisbon last month and the ISP is different'), ['semantic: maria moved to Lisbon last month']);
  });

  test('two clauses, two facts, each with its verb agreeing', () => {
    assert.deepEqual(said('I drive a red Tesla and I live in Porto.', 'user', [person('ts-user')]), [
      'semantic: ts-user drives a red Tesla',
      'semantic: ts-user lives in Porto',
    ]);
  });

  test('"my" is the speaker too', () => {
    assert.deepEqual(said('I need help setting up my new router'), ["semantic: maria needs help setting up maria's new router"]);
  });

  test("the assistant's narration is neither a fact about the user nor a procedure", () => {
    assert.deepEqual(said('Done. First, I set up email reminders for you. I also added your dentist appointment.', 'assistant'), []);
  });

  test('a correction is stored as a fact', () => {
    assert.deepEqual(said('I actually live in Madrid now'), ['semantic: maria lives in Madrid now']);
    assert.deepEqual(said('Oh, I no longer work at Acme.'), ['semantic: maria no longer works at Acme']);
  });
});

describe('tier-1 rules: statements', () => {
  const cases: [string, string[]][] = [
    ["I'm allergic to shellfish.", ['semantic: maria is allergic to shellfish']],
    ['I can’t eat gluten.', ['semantic: maria can not eat gluten']],
    ["I'm vegetarian.", ['semantic: maria is vegetarian']],
    ['My name is Samira.', ["semantic: maria's name is Samira"]],
    ["I'm 34 years old.", ['semantic: maria is 34 years old']],
    ['I was born in Accra.', ['semantic: maria was born in Accra']],
    ['I speak Twi and French.', ['semantic: maria speaks Twi and French']],
    ['I work at a bakery.', ['semantic: maria works at a bakery']],
    ["I'm going to Japan in May.", ['semantic: maria is going to Japan in May']],
    ['I really love spicy food!', ['semantic: maria loves spicy food']],
    ["I don't drink coffee.", ['semantic: maria does not drink coffee']],
    ["I've got two cats.", ['semantic: maria has got two cats']],
    ["Hi! I'm a nurse.", ['semantic: maria is a nurse']],
    ['Last week I went to a pottery class with my kids.', ["semantic: maria went to a pottery class with maria's kids last week"]],
    ['Tuesday nights I take Italian lessons with a tutor online.', ['semantic: maria takes Italian lessons with a tutor online Tuesday nights']],
  ];
  for (const [text, expected] of cases) {
    test(JSON.stringify(text), () => assert.deepEqual(said(text), expected));
  }

  test('what is not a stated fact gives nothing: questions, hedges, hypotheticals, small talk, "we"', () => {
    for (const text of [
      'How are you?', 'Do I need a visa for Peru?', 'I think it might rain.', 'I guess that works.', 'I would love a cabin someday.',
      'If I win, I buy a boat.', "That's great!", 'We went camping in the hills.', 'Thanks, I appreciate it.',
    ]) {
      assert.deepEqual(said(text), [], text);
    }
  });
});

describe('tier-1 rules: who "I" and "you" are', () => {
  const pair = [person('Caroline'), person('Melanie')];

  test('a role naming a participant speaks for that participant', () => {
    assert.deepEqual(facts([
      { role: 'Caroline', content: 'I adopted a beagle last year.' },
      { role: 'Melanie', content: 'Nice! I paint landscapes on weekends.' },
    ], pair), ['semantic: Caroline adopted a beagle last year', 'semantic: Melanie paints landscapes on weekends']);
  });

  test('"you" is the addressee: a clause about the listener is left out, the possessive resolved in a step', () => {
    assert.deepEqual(facts([{ role: 'Caroline', content: "I'm so proud of you. I'll keep you posted." }], pair), []);
    assert.deepEqual(said('1. Open your router settings. 2. Tap Wi-Fi.', 'assistant'), [
      "procedural: 1. Open maria's router settings",
      'procedural: 2. Tap Wi-Fi',
    ]);
  });

  test('with no one to resolve "you" to, what uses it is dropped', () => {
    assert.deepEqual(said('1. Open your router settings.', 'user', [person('solo')]), []);
  });

  test('the listener called by name at the end is not part of the fact', () => {
    assert.deepEqual(facts([{ role: 'Melanie', content: 'I finished another painting yesterday, Caro!' }], pair), [
      'semantic: Melanie finished another painting yesterday',
    ]);
  });

  test("names are inserted literally, whatever they contain, and facts are owned by their speaker", () => {
    for (const name of ['A$&B', 'Bob$1', "$'x$`", 'Zoë $2 $$1']) {
      const memories = extractByRules([{ role: 'user', content: "I'm allergic to peanuts." }], [person(name)], null);
      assert.deepEqual(memories.map((m) => [m.content, m.entities]), [[`${name} is allergic to peanuts`, [name]]], name);
    }
  });
});

describe('tier-1 rules: procedures', () => {
  test('marked steps are procedures, from either side; chat imperatives are not', () => {
    assert.deepEqual(said('To reset the router, hold the button for ten seconds.'), ['procedural: To reset the router, hold the button for ten seconds']);
    assert.deepEqual(said('Always unplug the modem before upgrading the firmware.', 'assistant'), ['procedural: Always unplug the modem before upgrading the firmware']);
    assert.deepEqual(said('Take care! Keep it up! Let me know.'), []);
  });

  test('procedural confidence follows the outcome', () => {
    const turn = [{ role: 'user', content: 'First, unplug the modem.' }];
    const confidence = (outcome: 'success' | 'failure' | null) => extractByRules(turn, MARIA, outcome)[0].confidence;
    assert.ok(confidence('success') > confidence(null));
    assert.ok(confidence('failure') < confidence(null));
  });
});

describe('tier-1 rules: no first- or second-person pronoun survives', () => {
  test('over a corpus of conversational turns, every stored fact names its person', () => {
    const corpus = buildCorpus({ people: 8, sessionsPerPerson: 3, factsPerPerson: 6, seed: 11 });
    const own = [
      "I'm Ana and my husband's name is Leo. You'd like him.", 'My kids and I baked bread, and you should try it!',
      "I told you I'm moving to Oslo in June.", 'Me? I only drink tea, you know.', 'Your idea was great; I used it on my bike.',
      'I love my job but my boss and I argue. Do you?', 'I myself fixed my car last Sunday.', "We'll see. I've lived in Rome for ten years.",
    ];
    let stored = 0;
    for (const session of corpus.sessions) {
      const participants = [person(session.person), person('assistant-bot', 'agent')];
      const turns = [...session.turns, ...own.map((content) => ({ role: 'user', content }))];
      for (const memory of extractByRules(turns, participants, null)) {
        stored++;
        assert.equal(isMalformed(memory.content), false, memory.content);
        assert.equal(memory.entities[0], session.person);
      }
    }
    assert.ok(stored > corpus.sessions.length, `only ${stored} memories: the check would prove nothing`);
  });
});

test('thirdPerson agrees a base form with a third-person subject', () => {
  assert.deepEqual(['drive', 'go', 'try', 'watch', 'play', 'have', 'be', 'fix'].map(thirdPerson),
    ['drives', 'goes', 'tries', 'watches', 'plays', 'has', 'is', 'fixes']);
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

describe('tier-1 rules: pronouns that do not name the speaker alone, and words that are not keys', () => {
  test('"our" is the speaker and someone else: the clause is not stored as the speaker\'s', () => {
    assert.deepEqual(said('I love our new house.'), []);
    assert.deepEqual(said('Our dog is called Rex.'), []);
  });

  test('"mine": the noun stays, the pronoun is the speaker\'s only beside what it owns', () => {
    assert.deepEqual(said('I work in a gold mine.'), ['semantic: maria works in a gold mine']);
    assert.deepEqual(said('I met a friend of mine.'), ["semantic: maria met a friend of maria's"]);
    assert.deepEqual(said('I lost mine yesterday.'), []);
  });

  test('thirdPerson reads no member of Object.prototype as an irregular verb', () => {
    assert.deepEqual(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'].map(thirdPerson),
      ['constructors', '__proto__s', 'toStrings', 'hasOwnProperties', 'valueOfs']);
    assert.deepEqual(said('I constructor the __proto__ toString hasOwnProperty.').filter((m) => /function|\[object/.test(m)), []);
  });
});

describe('tier-1 rules: bounded work per episode', () => {
  test('a long transcript: the most recent turns within the text budget are read, older ones are not', () => {
    const turns = Array.from({ length: 20_000 }, (_, i) => ({ role: 'user', content: `I visited town number ${i} last week.` }));
    const kept = turnsWithinBudget(turns);
    assert.ok(kept.reduce((n, t) => n + t.content.length, 0) <= MAX_RULE_TEXT_CHARS);
    assert.equal(kept.at(-1)!.index, 19_999, 'the newest turn is read');
    assert.ok(kept[0]!.index > 0, 'the oldest turns are not');
    const stored = facts(turns);
    assert.ok(stored.includes('semantic: maria visited town number 19999 last week'));
    assert.ok(!stored.includes('semantic: maria visited town number 0 last week'));
  });

  test('a newest turn longer than the budget is read up to the last sentence end that fits', () => {
    const sentence = 'I play the cello on Sundays. ';
    const giant = sentence.repeat(Math.ceil((MAX_RULE_TEXT_CHARS * 2) / sentence.length));
    const [only] = turnsWithinBudget([{ role: 'user', content: 'I live in Oslo.' }, { role: 'user', content: giant }]);
    assert.ok(only!.content.length <= MAX_RULE_TEXT_CHARS && only!.content.endsWith('.'));
    assert.equal(only!.index, 1);
  });

  test('the turns before those read still say whom "you" means (their roles only)', () => {
    const group = [person('ana'), person('bea'), person('guide', 'agent')];
    const steps = [{ role: 'assistant', content: '1. Open your router settings. 2. Tap Wi-Fi.' }];
    // Bea spoke last before the agent's turn: the steps are hers, read or not.
    assert.deepEqual(facts([{ role: 'ana', content: 'Hi.' }, { role: 'bea', content: 'Help me.' }, ...steps], group),
      ["procedural: 1. Open bea's router settings", 'procedural: 2. Tap Wi-Fi']);
    assert.deepEqual(extractByRules(steps, group, null, ['ana', 'bea']).map((m) => `${m.entities[0]}: ${m.content}`),
      ["bea: 1. Open bea's router settings", 'bea: 2. Tap Wi-Fi']);
    assert.deepEqual(extractByRules(steps, group, null, ['bea', 'ana']).map((m) => m.entities[0]), ['ana', 'ana']);
  });

  test('the turns read: back from the newest while they fit the budget, the newest whatever its length', () => {
    const sizes = (...chars: number[]) => chars.map((n, seq) => ({ seq, role: 'user', chars: n }));
    assert.equal(firstRecentTurn(sizes(10, 20, 30), 60), 0);
    assert.equal(firstRecentTurn(sizes(10, 20, 30), 59), 1);
    assert.equal(firstRecentTurn(sizes(10, 20, 30), 49), 2);
    assert.equal(firstRecentTurn(sizes(10, 20, 100), 50), 2, 'the newest alone, over the budget');
    // A small turn behind one that does not fit is not read: the turns read are contiguous.
    assert.equal(firstRecentTurn(sizes(1, 100, 10), 50), 2);
    assert.equal(firstRecentTurn([], 50), 0);
  });

  test('rules that throw give no memories and say why, instead of failing the end', () => {
    const outcome = rulesOrNothing(() => { throw new Error('rule fault'); }, [{ role: 'user', content: 'I live in Oslo.' }], MARIA, null);
    assert.deepEqual(outcome, { memories: [], failure: 'rule fault' });
    assert.deepEqual(rulesOrNothing(extractByRules, [{ role: 'user', content: 'I live in Oslo.' }], MARIA, null).memories.map((m) => m.content), ['maria lives in Oslo']);
  });
});

test('with three participants, the addressee is the last other speaker, found in one pass over a long monologue', () => {
  const three = [person('ana'), person('ben'), person('helper', 'agent')];
  const roles = ['ana', 'ana', 'ben', 'ben', 'assistant', 'ana', ...Array.from({ length: 50_000 }, () => 'ana')];
  const voices = voicesOf(roles.map((role) => ({ role })), three);
  assert.deepEqual(voices.slice(0, 6).map((v) => v.addressee), [null, null, 'ana', 'ana', 'ben', 'helper']);
  assert.equal(voices.at(-1)!.addressee, 'helper');
  assert.equal(voices[4]!.speaker, null, 'the agent speaks for no one');
});
