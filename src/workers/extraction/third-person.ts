// A clause said in the first person, rewritten as a fact about the person who said it: "I"
// and "my" become the speaker's name, "you" and "your" the addressee's, the verb agrees
// ("I drive" → "Ana drives", "I'm" → "Ana is", "don't" → "does not"), fillers go ("actually",
// "really"), a time expression stays (moved after the fact when it opened the clause).
// Anything the rules do not understand gives null: a clause in the first person plural, a
// "you" nobody answers to, a hypothetical ("I would", "if"), a hedge ("I think", "I guess").
import type { Token } from './nlp.js';

export interface Fact {
  content: string;
  /** Participants the fact names besides the speaker. */
  mentions: string[];
}

/** Openers that carry nothing: interjections, discourse markers, "actually" (a correction keeps its content). */
const FILLERS = new Set([
  'well', 'oh', 'so', 'also', 'actually', 'anyway', 'anyways', 'yeah', 'yes', 'yep', 'yup', 'no', 'nope', 'ok', 'okay',
  'hey', 'hi', 'hello', 'um', 'uh', 'btw', 'honestly', 'plus', 'and', 'but', 'wow', 'aw', 'aww', 'haha', 'lol', 'omg',
  'sure', 'totally', 'really', 'just', 'literally', 'basically', 'kinda', 'truly', 'seriously', 'definitely', 'still',
]);
/** Dropped inside a fact too: they colour a statement without changing it. */
const INNER_FILLERS = new Set(['actually', 'really', 'just', 'totally', 'literally', 'honestly', 'basically', 'kinda', 'truly', 'seriously', 'definitely']);
/** A clause whose verb only frames another thought, or hedges it, states no fact. */
const FRAMING_VERBS = new Set([
  'think', 'guess', 'hope', 'wish', 'wonder', 'bet', 'suppose', 'mean', 'know', 'agree', 'appreciate', 'understand',
  'see', 'say', 'imagine', 'believe', 'doubt', 'thank', 'admire', 'hear', 'reckon',
]);
/** Modal verbs that make the clause hypothetical. */
const HYPOTHETICAL = new Set(['would', "'d", 'could', 'should', 'might', 'may', 'must', 'ought']);
/**
 * First person plural and the generic "you" that cannot be resolved to one person: "our" is the
 * speaker and someone else ("our new house"), and naming the speaker alone would misstate it.
 */
const UNRESOLVABLE = new Set(['we', 'us', 'our', 'ours', 'ourselves', "y'all", 'yall', "we're", "we've", "we'll", "we'd", "let's"]);
const FIRST_PERSON = new Set(['i', "i'm", "i've", "i'll", 'me', 'myself', 'my', 'mine']);
const CONTENT_POS = new Set(['NOUN', 'PROPN', 'NUM', 'ADJ', 'VERB']);
const PARTS_OF_DAY = /^(?:morning|afternoon|evening|night|weekend)s?$/;
const TIME_ENTITIES = new Set(['DATE', 'TIME', 'DURATION']);

/** The third person singular present: "drive" → "drives", "go" → "goes", "try" → "tries". */
// A Map, not an object literal: a word of the text is the key, and "constructor" or
// "__proto__" must not find Object.prototype's members.
const IRREGULAR = new Map([['be', 'is'], ['am', 'is'], ['have', 'has'], ['do', 'does'], ['go', 'goes']]);

export function thirdPerson(verb: string): string {
  const irregular = IRREGULAR.get(verb);
  if (irregular !== undefined) return irregular;
  if (/(?:s|sh|ch|x|z|o)$/.test(verb)) return `${verb}es`;
  if (/[^aeiou]y$/.test(verb)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

const CALENDAR_NAMES = /^(?:mon|tues|wednes|thurs|fri|satur|sun)day$|^(?:january|february|march|april|may|june|july|august|september|october|november|december)$/i;
/** A time phrase moved from the start of a sentence loses its capital, unless it is a day or month name. */
const lowerTimeWord = (word: string) => (CALENDAR_NAMES.test(word) ? word : word.toLowerCase());

const possessive = (name: string) => `${name}'s`;

interface Word {
  text: string;
  /** Whether a space goes before it. */
  spaced: boolean;
}

/** Leading fillers, a vocative ("Mel, …") and punctuation, then a leading time phrase, off the clause. */
function trimOpening(clause: Token[]): { body: Token[]; time: Token[] } {
  let i = 0;
  let time: Token[] = [];
  for (let moved = true; moved && i < clause.length; ) {
    moved = false;
    const t = clause[i];
    if (t.pos === 'PUNCT' || t.pos === 'INTJ' || t.pos === 'SYM' || t.entity === 'EMOJI' || FILLERS.has(t.lower)) {
      i++;
      moved = true;
    } else if (t.pos === 'PROPN' && clause[i + 1]?.text === ',') {
      i += 2;
      moved = true;
    } else if (t.lower === 'you' && clause[i + 1]?.lower === 'know') {
      i += 2;
      moved = true;
    } else if (t.entity && TIME_ENTITIES.has(t.entity) && time.length === 0) {
      let j = i;
      while (j < clause.length && clause[j].entity === t.entity) j++;
      // "Tuesday nights", "Sunday mornings": the part of the day belongs to the time phrase.
      while (j < clause.length && PARTS_OF_DAY.test(clause[j].lower)) j++;
      time = clause.slice(i, j);
      i = j;
      moved = true;
    } else if (t.lower === 'now' && time.length === 0) {
      time = [t];
      i++;
      moved = true;
    }
  }
  return { body: clause.slice(i), time };
}

/** The verb (after adverbs) that follows position i: the one that must agree with a third-person subject. */
function nextVerb(tokens: Token[], i: number): number {
  let j = i + 1;
  // Adverbs and "no longer" sit between the subject and its verb.
  while (j < tokens.length && (tokens[j].pos === 'ADV' || (tokens[j].lower === 'no' && tokens[j + 1]?.lower === 'longer'))) j++;
  return j < tokens.length && (tokens[j].pos === 'VERB' || tokens[j].pos === 'AUX') ? j : -1;
}

function agree(token: Token): string {
  switch (token.lower) {
    case 'am': case "'m": case 'are': case "'re": return 'is';
    case 'were': return 'was';
    case 'wanna': return 'wants to';
    case 'gotta': return 'has to';
    case 'have': case "'ve": return 'has';
    case 'do': return 'does';
    case "'ll": return 'will';
    case 'ca': return 'can';
    case 'wo': return 'will';
    default:
      // A base form after "I" is present tense; past forms ("moved", "was") already agree.
      return token.pos === 'VERB' && token.lower === token.lemma ? thirdPerson(token.lower) : token.text;
  }
}

/** Is this clause a first-person statement of fact the rules understand? Returns its subject's form. */
function firstPersonSubject(body: Token[]): 'I' | 'my' | null {
  const first = body[0];
  if (!first) return null;
  if (first.lower === 'i' || first.lower === "i'm" || first.lower === "i've" || first.lower === "i'll") return 'I';
  if (first.lower === 'my') return 'my';
  return null;
}

export function factOf(clause: Token[], voices: { speaker: string; addressee: string | null }): Fact | null {
  const { body, time } = trimOpening(clause);
  const subject = firstPersonSubject(body);
  if (!subject) return null;
  if (body.some((t) => t.lower === 'if' || UNRESOLVABLE.has(t.lower) || t.text === '?')) return null;
  if (body.some((t) => HYPOTHETICAL.has(t.lower) && (t.pos === 'AUX' || t.pos === 'VERB'))) return null;
  // The clause's main verb: the first verb that is not an auxiliary.
  const main = body.find((t, i) => i > 0 && t.pos === 'VERB');
  if (main && FRAMING_VERBS.has(main.lemma)) return null;
  // "I'm" at the start of a text can arrive as one token: it holds the verb.
  const verbAt = body[0].lower.startsWith("i'") ? 0 : body.findIndex((t) => t.pos === 'VERB' || t.pos === 'AUX');
  if (verbAt < 0) return null;
  if (!body.slice(verbAt + 1).some((t) => CONTENT_POS.has(t.pos) && !INNER_FILLERS.has(t.lower))) return null;

  return render(body, voices, time);
}

/**
 * The tokens as text with every first- and second-person word resolved to a name, or null
 * when one cannot be (no speaker for "I", no addressee for "you", a "we").
 */
export function render(body: Token[], voices: { speaker: string | null; addressee: string | null }, time: Token[] = []): Fact | null {
  if (body.some((t) => UNRESOLVABLE.has(t.lower))) return null;
  const speaker = voices.speaker;
  const mentions = new Set<string>();
  const words: Word[] = [];
  const agreeAt = new Set<number>();
  for (let i = 0; i < body.length; i++) {
    const t = body[i];
    const spaced = t.space !== '' || words.length === 0;
    const say = (text: string, space = spaced) => words.push({ text, spaced: space });
    if (t.pos === 'SYM' || t.entity === 'EMOJI' || INNER_FILLERS.has(t.lower)) continue;
    if (t.lower === 'you' && body[i + 1]?.lower === 'know' && (body[i + 2] === undefined || body[i + 2].pos === 'PUNCT')) {
      i++;
      continue;
    }
    if (agreeAt.has(i)) {
      say(agree(t), spaced || t.text.startsWith("'"));
      continue;
    }
    if (speaker === null && FIRST_PERSON.has(t.lower)) return null;
    switch (t.lower) {
      case 'i': {
        say(speaker!);
        // "my sister and I went": the subject is plural, the verb already agrees.
        if (body[i - 1]?.lower !== 'and') {
          const v = nextVerb(body, i);
          if (v >= 0) agreeAt.add(v);
        }
        continue;
      }
      case "i'm": say(speaker!); say('is', true); continue;
      case "i've": say(speaker!); say('has', true); continue;
      case "i'll": say(speaker!); say('will', true); continue;
      case 'me': case 'myself': say(speaker!); continue;
      case 'my': say(possessive(speaker!)); continue;
      case 'mine': {
        // The noun ("a gold mine") stays. The pronoun is the speaker's only where what it owns
        // is named beside it ("a friend of mine", "the blue one is mine"); as an object ("I
        // lost mine") it stands for something said elsewhere, which this clause cannot name.
        if (t.pos !== 'PRON') { say(t.text); continue; }
        const before = body[i - 1];
        if (before && (before.lower === 'of' || before.lemma === 'be')) { say(possessive(speaker!)); continue; }
        return null;
      }
      case "n't": say('not', true); continue;
      // "ur" is chat spelling of "your" ("ur cooking"); read as "you're" it would still name the addressee.
      case 'you': case 'ya': case 'u': case 'yourself': case 'your': case 'yours': case 'ur': {
        if (!voices.addressee) return null;
        mentions.add(voices.addressee);
        say((t.lower.startsWith('your') && t.lower !== 'yourself') || t.lower === 'ur' ? possessive(voices.addressee) : voices.addressee);
        // "you're", "you use": the verb agrees with the name, as after "I".
        if (t.lower === 'you' || t.lower === 'ya' || t.lower === 'u') {
          const v = nextVerb(body, i);
          if (v === i + 1 || (v > i + 1 && body[i + 1].pos === 'ADV')) agreeAt.add(v);
        }
        continue;
      }
      case 'ca': case 'wo': case 'sha':
        // "can't", "won't", "shan't" arrive as "ca" + "n't".
        say(body[i + 1]?.lower === "n't" ? t.lemma : t.text);
        continue;
      default:
        say(t.text);
    }
  }
  // No closing punctuation: a fact is a statement, not a quote.
  const closing = () => {
    while (words.length > 0 && /^[.!?,;:…\-–—"')]+$/.test(words[words.length - 1].text)) words.pop();
  };
  closing();
  // The listener called by name (or a short form of it) after a comma is not part of the fact.
  const last = words[words.length - 1]?.text.toLowerCase() ?? '';
  if (words.length > 2 && words[words.length - 2].text === ',' && last.length >= 2 && voices.addressee?.toLowerCase().startsWith(last)) {
    words.length -= 2;
    closing();
  }
  time.forEach((t, i) => words.push({ text: i === 0 ? lowerTimeWord(t.text) : t.text, spaced: true }));
  closing();
  const content = words.map((w, i) => (i > 0 && w.spaced ? ` ${w.text}` : w.text)).join('').replace(/\s+/g, ' ').trim();
  if (content.split(' ').length < 3) return null;
  if (speaker !== null) mentions.delete(speaker);
  // A fact opens with the speaker's name, written as the participant's name is: no capitalising.
  return { content, mentions: [...mentions] };
}
