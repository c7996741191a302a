// The tier-1 rule table: clear first-person statements and the third-person fact each one
// becomes. Patterns are tried in order, first match wins, so specific forms ("I'm allergic
// to") come before general ones ("I'm a …"). Each rule captures up to the end of the sentence.

export interface FactRule {
  pattern: RegExp;
  /** `$S` is the subject's name; `$1`.. are the captured groups. */
  template: string;
  confidence: number;
}

const END = String.raw`([^.!?\n]{1,160})`;
const rule = (source: string, template: string, confidence: number, flags = 'i'): FactRule => ({
  pattern: new RegExp(source, flags), template, confidence,
});

/** Lasting states a bare "I'm …" states about a person (unlike "I'm tired"). */
const STATES = [
  'vegetarian', 'vegan', 'pescatarian', 'diabetic', 'celiac', 'coeliac', 'lactose intolerant', 'gluten intolerant',
  'left-handed', 'right-handed', 'colou?rblind', 'deaf', 'blind', 'married', 'single', 'divorced', 'widowed',
  'engaged', 'retired', 'pregnant', 'self-employed', 'unemployed',
].join('|');

export const FACT_RULES: FactRule[] = [
  // health and diet
  rule(String.raw`^i(?:'m| am) (?:severely |very |really |deathly )?allergic to ${END}`, '$S is allergic to $1', 0.95),
  rule(String.raw`^i(?:'m| am) intolerant (?:to|of) ${END}`, '$S is intolerant to $1', 0.9),
  rule(String.raw`^i (?:can't|cannot|can not) (eat|have|drink|tolerate) ${END}`, '$S cannot $1 $2', 0.85),
  rule(String.raw`^i(?:'m| am) (?:a |an )?(${STATES})\b`, '$S is $1', 0.85),
  // identity
  rule(String.raw`^my name is ${END}`, "$S's name is $1", 0.95),
  rule(String.raw`^(?:please )?call me ${END}`, '$S prefers to be called $1', 0.9),
  rule(String.raw`^i go by ${END}`, '$S prefers to be called $1', 0.9),
  rule(String.raw`^i(?:'m| am) (\d{1,3}) (?:years old|yo)\b`, '$S is $1 years old', 0.9),
  rule(String.raw`^i was born (in|on) ${END}`, '$S was born $1 $2', 0.9),
  rule(String.raw`^i(?:'m| am) married to ${END}`, '$S is married to $1', 0.9),
  rule(String.raw`^i speak ${END}`, '$S speaks $1', 0.85),
  // location
  rule(String.raw`^i (?:currently )?live in ${END}`, '$S lives in $1', 0.9),
  rule(String.raw`^i(?:'m| am) (?:currently )?(?:living|based) in ${END}`, '$S lives in $1', 0.9),
  rule(String.raw`^i(?:'ve| have)? (?:just )?moved to ${END}`, '$S lives in $1', 0.9),
  rule(String.raw`^i(?:'m| am) from ${END}`, '$S is from $1', 0.9),
  // work
  rule(String.raw`^i work (at|for|as|on|in) ${END}`, '$S works $1 $2', 0.85),
  // plans (before preferences: "I want to" is a wish, "I'm going to" a plan)
  // "going to" takes a verb or a place: "is going to" reads right for both.
  rule(String.raw`^i(?:'m| am) (planning|going) to ${END}`, '$S is $1 to $2', 0.7),
  rule(String.raw`^i(?:'m| am) planning on ${END}`, '$S is planning on $1', 0.7),
  rule(String.raw`^i plan to ${END}`, '$S plans to $1', 0.7),
  rule(String.raw`^i(?:'m| am) moving to ${END}`, '$S is moving to $1', 0.75),
  rule(String.raw`^i(?:'ll| will) ${END}`, '$S will $1', 0.65),
  // preferences
  rule(String.raw`^i (?:really |absolutely |much )?(like|love|enjoy|prefer|hate|dislike|need|want|use) ${END}`, '$S $1s $2', 0.8),
  rule(String.raw`^i (?:don't|do not|never) (like|eat|drink|use|want|enjoy) ${END}`, '$S does not $1 $2', 0.8),
  rule(String.raw`^i(?:'d| would) rather ${END}`, '$S would rather $1', 0.75),
  rule(String.raw`^i(?:'m| am) not a (?:big |huge )?fan of ${END}`, '$S is not a fan of $1', 0.8),
  // possessions and relationships
  rule(String.raw`^i(?:'ve| have) (?:got )?(an? |two |three |four |five |\d+ )${END}`, '$S has $1 $2', 0.8),
  rule(String.raw`^i (own|drive|ride) ${END}`, '$S $1s $2', 0.8),
  rule(String.raw`^my ([\p{L}\p{N}' ]{1,40}?) (is|are) ${END}`, "$S's $1 $2 $3", 0.85, 'iu'),
  // identity, general: last, it matches much
  rule(String.raw`^i(?:'m| am) (an? [^.!?\n]{1,80})`, '$S is $1', 0.8),
];
