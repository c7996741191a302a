// `npm run bench:supersession`: does recall answer with what is true NOW when a fact changed
// over time (issue 26, docs/time.md)? Generated timelines, seeded: people move, change employer,
// job and preferences, 2–4 values per attribute, each change stated with a `valid_from` over two
// years. Each person's changes are sent in order, newest first or shuffled (a third each, drawn),
// people interleaved, through POST /v1/remember/batch. For every (person, attribute) one
// question in the words of one of several templates ("Where does Ana Ruiz live now?") — never
// naming a value, and the words of each statement are drawn independently of its time, so no
// version matches the question's words better than another by construction.
//
// Two stores, same run, same timelines and questions: the statements worded only with templates
// the service's attribute rule (shared/fact-attributes.ts) reads as setting the attribute, and
// worded with every template (some outside the rule: "became a", "favorite dish" for food, …; a
// statement the rule does not read can neither supersede nor be superseded). Scored per store:
//   - rank 1 states the current value;
//   - the first statement of the asked person and attribute in the top 10 states the current
//     value (the time question alone, whatever else ranks above it);
//   - rank 1 states the value valid at an `as_of` between two changes;
// each for the service (superseded facts left out by default; as_of), the service without
// supersession (the same store asked with include_superseded: true) and plain BM25 (FTS5,
// unicode61, no stemming, query words OR-ed) over the same statements.
//
// BENCH_PEOPLE (default 200), BENCH_SEED (default 26), BENCH_EMBEDDER (use | glove | hash;
// default use, the service's default).
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { factAttribute } from '../src/shared/fact-attributes.js';
import { tokenize } from '../src/workers/recall/query-text.js';
import { rng } from './lib/corpus.js';
import { startService } from './lib/processes.js';
import { drain, post } from './recall-quality/locomo.js';

const PEOPLE = Number(process.env.BENCH_PEOPLE ?? '200');
const SEED = Number(process.env.BENCH_SEED ?? '26');
const EMBEDDER = (process.env.BENCH_EMBEDDER ?? 'use') as 'use' | 'glove' | 'hash';
const BATCH = 500;

const random = rng(SEED);
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
const shuffle = <T>(items: T[]) => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
};

const FIRST = ['Ana', 'Bruno', 'Chiara', 'Dmitri', 'Elif', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas', 'Kemal', 'Lena', 'Mateo', 'Nadia',
  'Oskar', 'Priya', 'Quentin', 'Rosa', 'Sven', 'Tariq', 'Ulla', 'Viktor', 'Wen', 'Ximena', 'Yusuf', 'Zofia'];
const LAST = ['Abbott', 'Bianchi', 'Castillo', 'Dubois', 'Eriksen', 'Fischer', 'Gallo', 'Horvat', 'Ivanova', 'Jansen', 'Kowalski', 'Lindqvist',
  'Moreau', 'Novak', 'Okafor', 'Petrov', 'Quispe', 'Rossi', 'Sato', 'Tanaka', 'Uribe', 'Varga', 'Weber', 'Yilmaz', 'Zeller'];

interface Attribute {
  name: string;
  values: readonly string[];
  /** How a change is stated: `{who}` the person, `{v}` the value. */
  statements: readonly string[];
  /** How the current value is asked for (never naming a value). */
  questions: readonly string[];
  /** How the value at a past moment is asked for (with as_of). */
  pastQuestions: readonly string[];
}

const ATTRIBUTES: readonly Attribute[] = [
  {
    name: 'home',
    values: ['Berlin', 'Madrid', 'Lisbon', 'Oslo', 'Vienna', 'Porto', 'Krakow', 'Dublin', 'Zurich', 'Lyon', 'Seville', 'Gdansk', 'Tallinn',
      'Bologna', 'Ghent', 'Malmo', 'Leipzig', 'Valencia', 'Bergen', 'Turin', 'Nantes', 'Brno', 'Aarhus', 'Graz'],
    statements: ['{who} lives in {v}', '{who} moved to {v}', '{who} is based in {v}', '{who} resides in {v}', '{who} relocated to {v}'],
    questions: ['Where does {who} live now?', 'Which city is {who} living in these days?', 'Where is {who} based at the moment?'],
    pastQuestions: ['Where did {who} live?', 'Which city was {who} living in?'],
  },
  {
    name: 'employer',
    values: ['Northwind Logistics', 'Bluefield Bank', 'Copperleaf Studio', 'Harbor Health', 'Ironbark Robotics', 'Juniper Foods',
      'Kestrel Airlines', 'Lumen Energy', 'Maple Insurance', 'Nimbus Cloud', 'Orchid Pharma', 'Pinecrest Hotels', 'Quarry Media',
      'Redwood Retail', 'Saffron Travel', 'Tidewater Shipping'],
    statements: ['{who} works at {v}', '{who} works for {v}', '{who} took a job at {v}', '{who} is employed by {v}'],
    questions: ['Where does {who} work now?', 'Which company is {who} working for these days?', 'Who employs {who} at the moment?'],
    pastQuestions: ['Where did {who} work?', 'Which company was {who} working for?'],
  },
  {
    name: 'occupation',
    values: ['nurse', 'architect', 'baker', 'pilot', 'data analyst', 'teacher', 'electrician', 'translator', 'chef', 'lawyer', 'journalist',
      'pharmacist', 'carpenter', 'accountant', 'photographer', 'surveyor'],
    statements: ['{who} works as a {v}', '{who} became a {v}', '{who} is now working as a {v}'],
    questions: ['What does {who} do for a living now?', 'What is the job of {who} these days?', 'What work does {who} do at the moment?'],
    pastQuestions: ['What did {who} do for a living?', 'What was the job of {who}?'],
  },
  {
    name: 'favourite colour',
    values: ['green', 'blue', 'orange', 'purple', 'yellow', 'red', 'teal', 'grey', 'pink', 'brown', 'black', 'white'],
    statements: ["{who}'s favourite colour is {v}", "{who}'s favorite color is {v}", '{who} likes {v} best of all colours'],
    questions: ["What is {who}'s favourite colour now?", 'Which colour does {who} like best these days?', 'What colour does {who} prefer now?'],
    pastQuestions: ["What was {who}'s favourite colour?", 'Which colour did {who} like best?'],
  },
  {
    name: 'favourite food',
    values: ['sushi', 'paella', 'ramen', 'lasagne', 'falafel', 'pierogi', 'curry', 'tacos', 'risotto', 'goulash', 'dumplings', 'moussaka'],
    statements: ["{who}'s favourite food is {v}", "{who}'s favorite dish is {v}", '{who} likes {v} more than any other food'],
    questions: ["What is {who}'s favourite food now?", 'Which dish does {who} like best these days?', 'What food does {who} prefer now?'],
    pastQuestions: ["What was {who}'s favourite food?", 'Which dish did {who} like best?'],
  },
];

interface Statement {
  person: string;
  attribute: string;
  value: string;
  validFrom: number;
  text: string;
}

interface Timeline {
  person: string;
  attribute: Attribute;
  /** Values in time order (a value may come back: "moved back to Berlin"). */
  steps: { value: string; validFrom: number }[];
}

const DAY = 86_400_000;
const START = Date.UTC(2023, 0, 1);
const SPAN_DAYS = 730;
const an = (text: string) => text.replace(/\ban ([^aeiou])/gi, 'a $1').replace(/\ba ([aeiou])/gi, 'an $1');

/** A change as sent: which timeline, which of its steps. */
interface Sent {
  timeline: number;
  step: number;
}

/** Every person's timelines, and the order their changes are sent in. */
function generate(): { timelines: Timeline[]; sent: Sent[]; orders: Record<string, number>; orderOf: Map<string, string> } {
  const names = shuffle(FIRST.flatMap((f) => LAST.map((l) => `${f} ${l}`))).slice(0, PEOPLE);
  if (names.length < PEOPLE) throw new Error(`BENCH_PEOPLE at most ${FIRST.length * LAST.length}`);
  const timelines: Timeline[] = [];
  const perPerson: (Sent & { at: number })[][] = [];
  const orders = { 'in order': 0, 'newest first': 0, shuffled: 0 };
  const orderOf = new Map<string, string>();
  for (const person of names) {
    const mine: (Sent & { at: number })[] = [];
    for (const attribute of ATTRIBUTES) {
      const changes = 2 + Math.floor(random() * 3);
      // Distinct days, at least two: every timeline has a change.
      const days = new Set<number>();
      while (days.size < changes) days.add(Math.floor(random() * SPAN_DAYS));
      const steps: Timeline['steps'] = [];
      for (const day of [...days].sort((a, b) => a - b)) {
        // A different value from the one before; an older one may come back.
        let value = pick(attribute.values);
        while (value === steps.at(-1)?.value) value = pick(attribute.values);
        steps.push({ value, validFrom: START + day * DAY + Math.floor(random() * DAY) });
      }
      steps.forEach((step, i) => mine.push({ timeline: timelines.length, step: i, at: step.validFrom }));
      timelines.push({ person, attribute, steps });
    }
    const order = pick(['in order', 'newest first', 'shuffled'] as const);
    orders[order]++;
    orderOf.set(person, order);
    mine.sort((a, b) => a.at - b.at);
    perPerson.push(order === 'in order' ? mine : order === 'newest first' ? mine.reverse() : shuffle(mine));
  }
  // People interleaved, each keeping their own order.
  const sent: Sent[] = [];
  const queues = perPerson.map((q) => [...q]);
  while (queues.some((q) => q.length > 0)) {
    const { timeline, step } = pick(queues.filter((q) => q.length > 0)).shift()!;
    sent.push({ timeline, step });
  }
  return { timelines, sent, orders, orderOf };
}

/**
 * A template is in the rule's vocabulary when shared/fact-attributes.ts reads it as setting the
 * same attribute as the attribute's first template does (what supersession can act on).
 */
function inVocabulary(attribute: Attribute, template: string): boolean {
  const read = (t: string) => factAttribute(an(t.replace('{who}', 'Someone Else').replace('{v}', attribute.values[0]!)))?.attribute;
  const own = read(attribute.statements[0]!);
  return own !== undefined && read(template) === own;
}

/** The changes as statements, in send order, each in words drawn from `templates(attribute)`. */
function render(timelines: Timeline[], sent: Sent[], templates: (a: Attribute) => readonly string[]): Statement[] {
  return sent.map(({ timeline, step }) => {
    const { person, attribute, steps } = timelines[timeline]!;
    const { value, validFrom } = steps[step]!;
    return { person, attribute: attribute.name, value, validFrom, text: an(pick(templates(attribute)).replace('{who}', person).replace('{v}', value)) };
  });
}

interface Question {
  text: string;
  /** The value that answers it. */
  value: string;
  person: string;
  attribute: string;
  asOf?: number;
}

function questions(timelines: Timeline[]): { now: Question[]; past: Question[] } {
  const now: Question[] = [];
  const past: Question[] = [];
  for (const { person, attribute, steps } of timelines) {
    now.push({ text: pick(attribute.questions).replace('{who}', person), value: steps.at(-1)!.value, person, attribute: attribute.name });
    // A moment strictly inside an earlier value's validity.
    const i = Math.floor(random() * (steps.length - 1));
    const asOf = steps[i]!.validFrom + Math.floor(random() * (steps[i + 1]!.validFrom - steps[i]!.validFrom));
    if (asOf > steps[i]!.validFrom) past.push({ text: pick(attribute.pastQuestions).replace('{who}', person), value: steps[i]!.value, person, attribute: attribute.name, asOf });
  }
  return { now, past };
}

/** What a stored memory states, by its id. */
type Stated = Map<string, Statement>;

/** Rank 1 states the question's answer: the right person, attribute and value. */
const correct = (q: Question, top: Statement | undefined) => top !== undefined && top.person === q.person && top.attribute === q.attribute && top.value === q.value;

function plainBm25(statements: Statement[], asked: Question[], sameAttribute: (q: Question, s: Statement) => boolean): Answer[] {
  const db = new Database(':memory:');
  db.exec('CREATE VIRTUAL TABLE facts USING fts5(content, i UNINDEXED, tokenize = "unicode61")');
  const insert = db.prepare('INSERT INTO facts (content, i) VALUES (?, ?)');
  statements.forEach((s, i) => insert.run(s.text, i));
  const query = db.prepare<[string], { i: number }>('SELECT i FROM facts WHERE facts MATCH ? ORDER BY rank LIMIT 10');
  const answers = asked.map((q): Answer => {
    const words = tokenize(q.text);
    const said = words.length === 0 ? [] : query.all(words.map((w) => `"${w}"`).join(' OR ')).map((r) => statements[r.i]!);
    return { top: said[0], firstOfAttribute: said.find((s) => sameAttribute(q, s)) };
  });
  db.close();
  return answers;
}

/** `work` over every item, four at a time (the pool's size on this box), results in order. */
async function each<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  }));
  return out;
}

const share = (hits: boolean[]) => (hits.length === 0 ? NaN : hits.filter(Boolean).length / hits.length);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Rank 1 and the first of the asked person's statements of that attribute in the top 10. */
interface Answer {
  top?: Statement;
  firstOfAttribute?: Statement;
}

/** Writes the statements into a fresh service and asks every question of every arm. */
async function measure(statements: Statement[], now: Question[], past: Question[]) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-supersession-'));
  const service = await startService({ dbPath: join(dir, 'bench.db'), embedder: EMBEDDER });
  try {
    const stated: Stated = new Map();
    for (let i = 0; i < statements.length; i += BATCH) {
      const chunk = statements.slice(i, i + BATCH);
      const { results } = await post<{ results: { memory?: { id: string }; error?: unknown }[] }>(service.base, '/v1/remember/batch', {
        facts: chunk.map((s) => ({ entity: s.person, fact: s.text, valid_from: new Date(s.validFrom).toISOString() })),
      });
      results.forEach((r, j) => {
        if (!r.memory) throw new Error(`item ${i + j} refused: ${JSON.stringify(r.error)}`);
        stated.set(r.memory.id, chunk[j]!);
      });
    }
    await drain(service.base);
    const ask = async (q: Question, extra: Record<string, unknown>): Promise<Answer> => {
      const { memories } = await post<{ memories: { id: string }[] }>(service.base, '/v1/recall', { query: q.text, limit: 10, types: ['semantic'], ...extra });
      const said = memories.map((m) => stated.get(m.id));
      return { top: said[0], firstOfAttribute: said.find((s) => s?.person === q.person && s.attribute === q.attribute) };
    };
    const now3: [string, Answer[]][] = [
      ['service (superseded left out)', await each(now, (q) => ask(q, {}))],
      ['service, include_superseded: true', await each(now, (q) => ask(q, { include_superseded: true }))],
      ['plain BM25 (FTS5, no stemming)', plainBm25(statements, now, (q, s) => s.person === q.person && s.attribute === q.attribute)],
    ];
    const past3: [string, Answer[]][] = [
      ['service, as_of', await each(past, (q) => ask(q, { as_of: new Date(q.asOf!).toISOString() }))],
      ['service, include_superseded: true', await each(past, (q) => ask(q, { include_superseded: true }))],
      ['plain BM25 (FTS5, no stemming)', plainBm25(statements, past, (q, s) => s.person === q.person && s.attribute === q.attribute)],
    ];
    return { now: now3, past: past3 };
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const { timelines, sent, orders, orderOf } = generate();
const { now, past } = questions(timelines);
const outside = ATTRIBUTES.flatMap((a) => a.statements.filter((t) => !inVocabulary(a, t)));
const corpora: [string, Statement[]][] = [
  ["the rule's phrasings", render(timelines, sent, (a) => a.statements.filter((t) => inVocabulary(a, t)))],
  ['all phrasings', render(timelines, sent, (a) => a.statements)],
];
const versions = timelines.reduce((n, t) => n + t.steps.length, 0) / timelines.length;
console.log(`\nSupersession — ${PEOPLE} people, ${ATTRIBUTES.length} attributes (${ATTRIBUTES.map((a) => a.name).join(', ')}), ` +
  `${sent.length} changes over ${SPAN_DAYS / 365} years (${versions.toFixed(2)} values per attribute), seed ${SEED}, embedder ${EMBEDDER}`);
console.log(`sent through remember/batch (${BATCH} a call): people ${orders['in order']} in order, ${orders['newest first']} newest first, ${orders.shuffled} shuffled, interleaved`);
console.log(`templates outside the attribute rule's vocabulary (used only in "all phrasings"): ${outside.map((t) => JSON.stringify(t)).join(', ')}`);
const chance = timelines.reduce((n, t) => n + 1 / new Set(t.steps.map((s) => s.value)).size, 0) / timelines.length;
const header = (title: string) => `${title.padEnd(38)}${['all', ...ATTRIBUTES.map((a) => a.name)].map((n) => n.padStart(17)).join('')}`;
const row = (name: string, asked: Question[], hits: boolean[]) => {
  const by = ATTRIBUTES.map((a) => share(hits.filter((_, i) => asked[i]!.attribute === a.name)));
  return `${name.padEnd(38)}${[share(hits), ...by].map((x) => pct(x).padStart(17)).join('')}`;
};
for (const [corpus, statements] of corpora) {
  process.stderr.write(`[bench] supersession: ${corpus}\n`);
  const recognised = statements.filter((s) => factAttribute(s.text) !== null).length;
  const result = await measure(statements, now, past);
  console.log(`\n== ${corpus}: ${statements.length} statements, ${pct(recognised / statements.length)} of them read by the attribute rule as setting an attribute`);
  console.log(`rank 1 states the current value ("where does X live now?"), ${now.length} questions`);
  console.log(header('ranking'));
  for (const [name, answers] of result.now) console.log(row(name, now, answers.map((a, i) => correct(now[i]!, a.top))));
  console.log(`the first of the person's statements of that attribute in the top 10 states the current value`);
  for (const [name, answers] of result.now) console.log(row(name, now, answers.map((a, i) => correct(now[i]!, a.firstOfAttribute))));
  const [service] = result.now;
  const byOrder = (pickOf: (a: Answer) => Statement | undefined) => Object.keys(orders).map((order) => {
    const hits = now.map((q, i) => [q, service[1][i]!] as const).filter(([q]) => orderOf.get(q.person) === order).map(([q, a]) => correct(q, pickOf(a)));
    return `${order} ${pct(share(hits))}`;
  }).join(', ');
  console.log(`  service by import order — rank 1: ${byOrder((a) => a.top)}; first of the attribute: ${byOrder((a) => a.firstOfAttribute)}`);
  console.log(`rank 1 states the value valid then (as_of between two changes), ${past.length} questions`);
  for (const [name, answers] of result.past) console.log(row(name, past, answers.map((a, i) => correct(past[i]!, a.top))));
}
console.log(`\n(one of the person's values at random would be right ${pct(chance)} of the time)`);
