// Deterministic synthetic memories and queries. Texts look like what agents store (short
// facts about named people, conversation turns). Template verbs ("prefers", "lives") recur
// in a few percent of memories and everyday nouns in well under one percent each, with a
// long tail of rare made-up names (projects, places), so FTS posting lists and bm25 work
// roughly as on real text. The same seed always gives the same corpus.

/** mulberry32: tiny, fast, good enough for test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = (
  'ka ri to mo la ne vi sa du el an or be ta ki ro mi na zu fe lo da re si ya po gu te wa ni ' +
  'jo sha bren cal dor fin gal hel ist jun kel lun mar nor pel quin ros sel tor ul var wen xan yel zor'
).split(' ');

const RARE_WORDS = 5_000;

const NOUNS = (
  'tea coffee berlin madrid paris tokyo lisbon oslo cairo lima python rust typescript kotlin sql ' +
  'postgres redis kafka docker kubernetes terraform react svelte linux windows macos android iphone ' +
  'guitar piano violin drums chess tennis football running cycling swimming yoga climbing hiking ' +
  'sushi pasta curry tacos ramen salad pizza peanuts gluten lactose shellfish dogs cats parrots ' +
  'novels podcasts jazz techno opera movies anime painting pottery gardening cooking baking ' +
  'mornings evenings weekends mondays deadlines meetings standups reviews invoices budgets reports ' +
  'dashboards migrations outages backups releases tickets sprints roadmaps contracts interviews ' +
  'flights trains hotels visas passports insurance mortgage rent taxes salary bonus pension ' +
  'marathon triathlon wedding birthday anniversary vacation conference workshop hackathon ' +
  'newsletter blog slides spreadsheet notebook whiteboard headphones keyboard monitor laptop'
).split(' ');

const ADJECTIVES = (
  'green black spicy quiet early late remote weekly monthly annual urgent legacy new old ' +
  'small large cheap expensive local foreign vegan organic strong decaf cold hot'
).split(' ');

const FACTS = [
  '{a} prefers {adj} {n}', '{a} lives in {n}', '{a} works with {n} every day', '{a} is allergic to {n}',
  '{a} does not like {n}', '{a} wants to learn {n}', '{a} is responsible for {n} and {n2}',
  '{a} asked about {adj} {n} last week', '{a} usually books {n} through the travel desk',
  '{a} has {num} {n}', '{a} meets {b} on {n}', '{a} and {b} share a budget for {n}',
  '{a} reported a problem with {n} during {n2}', '{a} switched from {n} to {n2}',
  "{a}'s favourite topic is {n}", '{a} is based in {n} and travels for {n2}',
];

const MESSAGES = [
  'can you remind me about the {n} next week', 'I think {b} handles the {adj} {n} now',
  'the {n} went fine, thanks', 'please move the {n} to {n2}', 'we should look at {n} before {n2}',
  'I never got the {adj} {n} you mentioned', 'let us skip {n} this time', 'how much was the {n}',
];

const QUERIES = [
  'what does {a} prefer', 'where does {a} live', 'who works with {n}', 'is {a} allergic to anything',
  'what does {a} think about {n}', '{adj} {n}', 'problems with {n} during {n2}', 'who is based in {n}',
  'what did {a} and {b} talk about', 'anything about {n} or {n2}', 'plans for {n}', '{n}',
];

export class Corpus {
  private readonly random: () => number;
  readonly entityNames: string[];
  private readonly nameSet: Set<string>;
  private readonly rareWords: string[];

  constructor(seed: number, entityCount: number) {
    this.random = rng(seed);
    const names = new Set<string>();
    const naming = rng(seed ^ 0x5bd1e995);
    while (names.size < entityCount) {
      const parts = 2 + Math.floor(naming() * 2);
      let name = '';
      for (let i = 0; i < parts; i++) name += SYLLABLES[Math.floor(naming() * SYLLABLES.length)];
      // A numeric suffix keeps names unique past the syllable space without changing their look.
      if (names.has(name[0].toUpperCase() + name.slice(1))) name += String(names.size % 97);
      names.add(name[0].toUpperCase() + name.slice(1));
    }
    this.entityNames = [...names];
    this.nameSet = names;
    const words = new Set<string>();
    const coining = rng(seed ^ 0x27d4eb2f);
    while (words.size < RARE_WORDS) {
      let word = '';
      for (let i = 0; i < 3; i++) word += SYLLABLES[Math.floor(coining() * SYLLABLES.length)];
      if (!names.has(word[0].toUpperCase() + word.slice(1))) words.add(word);
    }
    this.rareWords = [...words];
  }

  isEntity(word: string): boolean {
    return this.nameSet.has(word);
  }

  /** Half everyday nouns, half rare made-up names from a long tail. */
  private noun(): string {
    if (this.random() < 0.5) return this.pick(NOUNS);
    return this.rareWords[Math.floor(this.random() * this.rareWords.length)];
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)];
  }

  /** Uniform: in a fleet, memories spread over many users rather than piling onto one. */
  entity(): string {
    return this.pick(this.entityNames);
  }

  private fill(template: string, a: string, b: string): string {
    return template
      .replace('{a}', a)
      .replace('{b}', b)
      .replace('{adj}', this.pick(ADJECTIVES))
      .replace('{n2}', this.noun())
      .replace('{n}', this.noun())
      .replace('{num}', String(1 + Math.floor(this.random() * 9)));
  }

  /** A fact about `owner`, mentioning another entity sometimes. */
  fact(owner: string): string {
    return this.fill(this.pick(FACTS), owner, this.entity());
  }

  message(other: string): string {
    return this.fill(this.pick(MESSAGES), '', other);
  }

  query(): string {
    return this.fill(this.pick(QUERIES), this.entity(), this.entity());
  }

  /** A number in [0, 1) from the corpus stream (for timestamps, confidences). */
  next(): number {
    return this.random();
  }
}
