// A synthetic multi-session conversation corpus with questions and the turns that answer
// them. Generated from a seed, never downloaded. Each person talks to an assistant over
// several sessions; a few turns state facts, the rest are small talk and help requests.
// Questions paraphrase the fact (few shared words) and name the person, while every person
// has facts on the same topics — so a question is answered by *that person's* turn only.

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
  /** Set on fact turns: the question ids this turn answers. */
  answers?: string[];
}

export interface Session {
  person: string;
  turns: Turn[];
}

export interface Question {
  id: string;
  person: string;
  text: string;
}

export interface Corpus {
  sessions: Session[];
  questions: Question[];
}

interface Topic {
  values: string[];
  statement: (v: string) => string;
  /** A paraphrase: shares (almost) no words with the statement. */
  question: (person: string) => string;
  /** A question that reuses the statement's words, as people often do. */
  lexical: (person: string) => string;
}

const TOPICS: Record<string, Topic> = {
  pet: {
    values: ['golden retriever', 'beagle', 'dachshund', 'border collie', 'poodle', 'husky', 'corgi', 'labrador'],
    statement: (v) => `We finally brought home a ${v} puppy last weekend, she chews everything.`,
    question: (p) => `What kind of dog does ${p} have?`,
    lexical: (p) => `Which breed is the puppy ${p} brought home?`,
  },
  job: {
    values: ['nurse', 'carpenter', 'data analyst', 'pharmacist', 'high school teacher', 'architect', 'paramedic', 'accountant'],
    statement: (v) => `I started my new position as a ${v} on Monday and the team seems friendly.`,
    question: (p) => `What does ${p} do for a living?`,
    lexical: (p) => `What new position did ${p} start on Monday?`,
  },
  home: {
    values: ['Lisbon', 'Denver', 'Osaka', 'Tallinn', 'Montreal', 'Valencia', 'Perth', 'Krakow'],
    statement: (v) => `The movers dropped the last boxes at our new apartment in ${v} yesterday.`,
    question: (p) => `Which city is ${p}'s current home?`,
    lexical: (p) => `Where is ${p}'s new apartment?`,
  },
  allergy: {
    values: ['shellfish', 'peanuts', 'strawberries', 'sesame', 'kiwi', 'almonds', 'eggs', 'soy'],
    statement: (v) => `My throat swells up and I get hives whenever I eat ${v}.`,
    question: (p) => `Which food should ${p} avoid for medical reasons?`,
    lexical: (p) => `What does ${p} eat that gives them hives?`,
  },
  instrument: {
    values: ['cello', 'trumpet', 'banjo', 'violin', 'saxophone', 'piano', 'harp', 'drums'],
    statement: (v) => `I've been practicing the ${v} every evening after dinner.`,
    question: (p) => `What musical instrument is ${p} learning?`,
    lexical: (p) => `What is ${p} practicing every evening?`,
  },
  honeymoon: {
    values: ['Bali', 'Iceland', 'Santorini', 'Kyoto', 'Patagonia', 'Zanzibar', 'Tuscany', 'Fiji'],
    statement: (v) => `Right after the wedding we flew to ${v} for two weeks.`,
    question: (p) => `Where did ${p} go on their honeymoon trip?`,
    lexical: (p) => `Where did ${p} fly after the wedding?`,
  },
  car: {
    values: ['Subaru Outback', 'Tesla Model 3', 'Honda Civic', 'Volvo XC60', 'Ford Ranger', 'Mini Cooper', 'Kia Niro', 'Toyota Prius'],
    statement: (v) => `I traded in my old hatchback and picked up a ${v} at the dealership.`,
    question: (p) => `What vehicle does ${p} drive now?`,
    lexical: (p) => `What did ${p} pick up at the dealership?`,
  },
  language: {
    values: ['Portuguese', 'Korean', 'Swahili', 'German', 'Arabic', 'Italian', 'Mandarin', 'Dutch'],
    statement: (v) => `Tuesday nights I take ${v} lessons with a tutor online.`,
    question: (p) => `Which foreign tongue is ${p} studying?`,
    lexical: (p) => `Which lessons does ${p} take on Tuesday nights?`,
  },
  sport: {
    values: ['rock climbing', 'rowing', 'fencing', 'surfing', 'squash', 'archery', 'trail running', 'judo'],
    statement: (v) => `Saturday mornings are for ${v}, I never skip it.`,
    question: (p) => `How does ${p} like to exercise on weekends?`,
    lexical: (p) => `What does ${p} never skip on Saturday mornings?`,
  },
  sibling: {
    values: ['Marco', 'Ingrid', 'Tomasz', 'Leila', 'Dmitri', 'Noor', 'Keanu', 'Ayumi'],
    statement: (v) => `My brother ${v} is flying in next month to stay with us.`,
    question: (p) => `Who from ${p}'s family is coming to visit?`,
    lexical: (p) => `Which brother is flying in to stay with ${p}?`,
  },
};

const SMALL_TALK = [
  'Thanks, that helps a lot.', 'Let me check my calendar and get back to you.', 'Haha, fair enough.',
  'Can you remind me what we discussed last time?', 'The weather has been awful this week.',
  'Could you summarise that in two lines?', 'I need to prepare slides for a meeting tomorrow.',
  'What is a good way to organise my inbox?', 'Ok, sounds good.', 'Can you draft a polite reply to my landlord?',
];
const ASSISTANT = [
  'Happy to help with that.', 'Here is a short summary of the main points.', 'Sure, I can draft that for you.',
  'That sounds like a good plan.', 'Let me know if you want me to adjust anything.', 'Noted, I will keep that in mind.',
];

/** Small deterministic PRNG (mulberry32), so every run builds the same corpus. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildCorpus(options: { people: number; sessionsPerPerson: number; factsPerPerson: number; seed?: number }): Corpus {
  const rand = random(options.seed ?? 42);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)];
  const topicNames = Object.keys(TOPICS);
  const sessions: Session[] = [];
  const questions: Question[] = [];
  const firstNames = ['Ava', 'Bruno', 'Chen', 'Dalia', 'Emeka', 'Freya', 'Gustavo', 'Hana', 'Ivan', 'Jonas', 'Kira', 'Luca', 'Mina',
    'Nikhil', 'Olga', 'Pablo', 'Quinn', 'Rosa', 'Sven', 'Tariq', 'Uma', 'Viktor', 'Wen', 'Ximena', 'Yusuf', 'Zara'];
  for (let p = 0; p < options.people; p++) {
    const person = `${firstNames[p % firstNames.length]}${p >= firstNames.length ? ` ${Math.floor(p / firstNames.length) + 1}` : ''}`;
    const topics = [...topicNames].sort(() => rand() - 0.5).slice(0, options.factsPerPerson);
    const personSessions: Session[] = Array.from({ length: options.sessionsPerPerson }, () => ({ person, turns: [] }));
    topics.forEach((topic, i) => {
      const id = `${p}:${topic}`;
      const t = TOPICS[topic];
      const session = personSessions[i % personSessions.length];
      session.turns.push({ role: 'user', content: t.statement(pick(t.values)), answers: [`${id}:paraphrase`, `${id}:lexical`] });
      session.turns.push({ role: 'assistant', content: pick(ASSISTANT) });
      questions.push({ id: `${id}:paraphrase`, person, text: t.question(person) });
      questions.push({ id: `${id}:lexical`, person, text: t.lexical(person) });
    });
    for (const session of personSessions) {
      for (let i = 0; i < 6; i++) session.turns.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: pick(i % 2 === 0 ? SMALL_TALK : ASSISTANT) });
      session.turns.sort(() => rand() - 0.5);
    }
    sessions.push(...personSessions);
  }
  return { sessions, questions };
}
