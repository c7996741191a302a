// How-to steps: an instruction marked as one. The sentence must be an imperative (it opens
// with a verb in its base form and has no subject) behind a marker that makes it a step or a
// rule: a list number, "first"/"then"/"finally", "always"/"never"/"make sure", or a purpose
// ("To reset the router, hold …"). Chat imperatives without a marker ("Take care!", "Keep it
// up!") are not procedures, and neither is narration ("First, I set up email reminders").
import type { Token } from './nlp.js';

const ORDINAL_LEADS = new Set(['first', 'firstly', 'then', 'next', 'finally', 'afterwards', 'lastly', 'second', 'secondly', 'third', 'thirdly']);
const RULE_LEADS = new Set(['always', 'never']);

/**
 * A verb in its base form. The tagger reads a capitalised verb opening a sentence ("Open
 * settings") as a proper noun, so one is accepted there too: only marked positions are asked.
 */
const isImperativeVerb = (t: Token | undefined) =>
  t !== undefined && (t.pos === 'VERB' || t.pos === 'AUX' || t.pos === 'PROPN') && t.lower === t.lemma && t.lower !== 'be' && /^[a-z]+$/.test(t.lower);

/** Index of the instruction's verb once the marker is read, or -1 when the sentence is not a marked step. */
function stepVerbAt(s: Token[]): number {
  let i = 0;
  // "1." / "2)" / "Step 3:"
  if (s[0]?.lower === 'step' && s[1]?.pos === 'NUM') i = 2;
  else if (s[0]?.pos === 'NUM' && (s[1]?.text === '.' || s[1]?.text === ')')) i = 1;
  let marked = i > 0;
  while (s[i]?.pos === 'PUNCT') i++;
  if (ORDINAL_LEADS.has(s[i]?.lower ?? '') || RULE_LEADS.has(s[i]?.lower ?? '')) {
    i++;
    marked = true;
  } else if (s[i]?.lower === 'make' && s[i + 1]?.lower === 'sure') {
    return i; // "make sure …" is itself the instruction
  } else if ((s[i]?.lower === 'remember' || s[i]?.lower === 'forget') && s[i + 1]?.lower === 'to') {
    return i;
  } else if (s[i]?.lower === 'do' && s[i + 1]?.lower === "n't") {
    return i;
  } else if (s[i]?.lower === 'to' && /^[a-z]+$/.test(s[i + 1]?.lower ?? '')) {
    // "To reset the router, hold …": the instruction follows the comma. The word after "to"
    // is not asked to be a verb: the tagger reads "reset the router" as a noun phrase.
    const comma = s.findIndex((t, j) => j > i && t.text === ',');
    if (comma < 0) return -1;
    return isImperativeVerb(s[comma + 1]) ? comma + 1 : -1;
  }
  while (s[i]?.pos === 'PUNCT') i++;
  return marked && isImperativeVerb(s[i]) ? i : -1;
}

/** The step as written, without closing punctuation, or null when the sentence is not one. */
export function procedureOf(sentence: Token[]): Token[] | null {
  if (sentence.length < 3 || sentence.some((t) => t.text === '?')) return null;
  if (stepVerbAt(sentence) < 0) return null;
  let end = sentence.length;
  while (end > 0 && (sentence[end - 1].pos === 'PUNCT' || sentence[end - 1].entity === 'EMOJI')) end--;
  return sentence.slice(0, end);
}
