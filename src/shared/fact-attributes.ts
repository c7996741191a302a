// What a fact says about its owner, reduced to (attribute, value) when the attribute holds one
// value at a time: where someone lives, works, is from, their age, "my X is …", whichever of the
// usual phrasings and spellings says it. Two facts of
// one owner with the same such attribute and different values cannot both hold at once. The
// contradiction detector (workers/recall/contradictions.ts) reports such pairs; the writer
// (writer/commands/supersession.ts) lets the later one supersede the earlier. One rule, here,
// so the two never disagree about what conflicts.

export interface FactAttribute {
  readonly attribute: string;
  readonly value: string;
}

// Each attribute's usual English predicates: the same attribute however it is said ("relocated
// to", "is employed by", "took a job as"). Left out on purpose: "became a …" and "is now a …",
// which as often name a family role, a diet or a membership as a job ("became a father") — read
// as an occupation they would supersede the real one and hide it from recall.
const SINGLE_VALUED: { attribute: string; pattern: RegExp }[] = [
  { attribute: 'lives in', pattern: /\b(?:lives|living|resides|residing|is based|moved|relocated|settled)(?: back)? (?:in|to) (.+)$/ },
  { attribute: 'is from', pattern: /\b(?:is|comes) from (.+)$/ },
  { attribute: 'works at', pattern: /\b(?:(?:works|working) (?:at|for)|is employed (?:at|by)|(?:took|got|accepted|started|landed) a (?:new )?(?:job|position) (?:at|with)) (.+)$/ },
  { attribute: 'works as', pattern: /\b(?:(?:works|working)|(?:took|got|accepted|started|landed) a (?:new )?(?:job|position)) as (?:an? )?(.+)$/ },
  { attribute: 'age', pattern: /\bis (\d+) years? old\b/ },
  { attribute: 'is married to', pattern: /\bis married to (.+)$/ },
  { attribute: 'born', pattern: /\bwas born (?:on|in) (.+)$/ },
  { attribute: 'name', pattern: /\bname is (.+)$/ },
  // "<owner>'s favourite colour is blue", "my birthday is in May"
  { attribute: '$1', pattern: /(?:'s|\bmy|\bher|\bhis|\btheir) ((?:favou?rite )?[a-z ]{2,30}?) (?:is|are) (.+)$/ },
  // A favourite said as a superlative: "likes green best of all colours", "loves ramen more than any other food".
  { attribute: '$2', pattern: /\b(?:likes|loves|prefers|enjoys) (.+?) (?:the )?(?:best|most) of all (?:the )?([a-z]+)$/ },
  { attribute: '$2', pattern: /\b(?:likes|loves|prefers|enjoys) (.+?) (?:more than|over|above) (?:any|every|all) other ([a-z]+)$/ },
];

/**
 * British and American spellings of the words attribute names are made of, so "favorite color"
 * and "favourite colour" are one attribute (values are compared as written).
 */
const SPELLINGS: Record<string, string> = {
  favorite: 'favourite', color: 'colour', flavor: 'flavour', neighbor: 'neighbour', humor: 'humour', honor: 'honour',
  behavior: 'behaviour', harbor: 'harbour', center: 'centre', theater: 'theatre', gray: 'grey', jewelry: 'jewellery',
  program: 'programme', catalog: 'catalogue', mom: 'mum', license: 'licence', defense: 'defence',
};

/** An attribute name in one spelling (British), each word singular where it was a plural of the superlative form. */
function attributeName(words: string): string {
  return words.trim().split(' ').map((word) => SPELLINGS[word] ?? word).join(' ');
}

/** "colours" → "colour", "dishes" → "dish", "cities" → "city" (the noun of "best of all colours"). */
function singular(noun: string): string {
  if (/ies$/.test(noun)) return `${noun.slice(0, -3)}y`;
  if (/(?:s|x|z|ch|sh)es$/.test(noun)) return noun.slice(0, -2);
  if (/[^s]s$/.test(noun)) return noun.slice(0, -1);
  return noun;
}

// Negated forms map to their affirmative so "is not vegetarian" compares with "is vegetarian".
const NEGATIONS: [RegExp, string][] = [
  [/\b(?:does not|doesn't|do not|don't|did not|didn't|never|no longer)\s+/g, ''],
  [/\b(?:is not|isn't)\b/g, 'is'],
  [/\b(?:are not|aren't)\b/g, 'are'],
  [/\b(?:was not|wasn't)\b/g, 'was'],
  [/\b(?:has not|hasn't)\b/g, 'has'],
  [/\bnot\s+/g, ''],
];

/** Text any NEGATIONS pattern matches contains one of these ("doesn't": n't, "is not": not). */
const NEGATION_WORD = /not|n't|never|no longer/;

/** Lower case, typographic quotes folded, final punctuation and extra spaces dropped. */
export function normaliseFact(text: string): string {
  return text.toLowerCase().replace(/[’`]/g, "'").replace(/[.!?;]+\s*$/, '').replace(/\s+/g, ' ').trim();
}

/** The affirmative form of a normalised statement, and whether it was negated. */
export function affirmative(text: string): { affirmed: string; negated: boolean } {
  // Most statements hold no negation word, and each pattern above needs one: skip the six scans.
  if (!NEGATION_WORD.test(text)) return { affirmed: text.replace(/\s+/g, ' ').trim(), negated: false };
  let affirmed = text;
  let negated = false;
  for (const [pattern, replacement] of NEGATIONS) {
    affirmed = affirmed.replace(pattern, () => {
      negated = true;
      return replacement;
    });
  }
  return { affirmed: affirmed.replace(/\s+/g, ' ').trim(), negated };
}

/** The single-valued attribute an affirmed, normalised statement sets, if any. */
export function attributeOfAffirmed(affirmed: string): FactAttribute | null {
  for (const rule of SINGLE_VALUED) {
    const match = rule.pattern.exec(affirmed);
    if (!match) continue;
    if (rule.attribute === '$1') return { attribute: `'s ${attributeName(match[1])}`, value: match[2].trim() };
    if (rule.attribute === '$2') return { attribute: `'s favourite ${attributeName(singular(match[2]))}`, value: match[1].trim() };
    return { attribute: rule.attribute, value: match[1].trim() };
  }
  return null;
}

/**
 * The single-valued attribute a fact sets (null for a negated statement: "does not live in
 * Paris" says where someone is not, which no other place contradicts).
 */
export function factAttribute(content: string): FactAttribute | null {
  const remembered = content.length <= MEMO_TEXT_LENGTH;
  let known = remembered ? recentlyParsed.get(content) : undefined;
  if (known === undefined) {
    const { affirmed, negated } = affirmative(normaliseFact(content));
    known = negated ? null : attributeOfAffirmed(affirmed);
    if (remembered) {
      if (recentlyParsed.size >= RECENTLY_PARSED) recentlyParsed.clear();
      recentlyParsed.set(content, known);
    }
  }
  return known;
}

// The writer parses the same texts again and again: a new fact's attribute, then each neighbour
// on its timeline (writer/commands/supersession.ts). The regular expressions cost more than the
// rest of a write's rule, so results are kept for the texts seen last, forgotten wholesale when
// the table fills. Only short texts (facts are): the table's size is bounded in characters too,
// 4,096 × 512 at most, however long the texts clients send.
const RECENTLY_PARSED = 4096;
const MEMO_TEXT_LENGTH = 512;
const recentlyParsed = new Map<string, FactAttribute | null>();

/** The attribute a stored row sets (semantic rows only), for rows written before it was stored. */
export function storedFactAttribute(row: Record<string, unknown>): string | null {
  return row.memory_type === 'semantic' && typeof row.content === 'string' ? factAttribute(row.content)?.attribute ?? null : null;
}
