// Which names a text could mention: every run of 1–4 words (split on spaces, and on
// non-letters), folded as the adapters fold entity names; each adapter looks them up by
// case-insensitive name (SQLite: sqlite/entity-matcher.ts). Used for the entity prior (entities
// in a query) and to link stored memories to the entities they mention.

const MAX_WORDS = 4;
const MAX_GRAMS = 400;

/** SQLite's lower() folds only ASCII; fold the same way so the index on lower(name) matches. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

export function nameCandidates(text: string): string[] {
  const grams = new Set<string>();
  const trimmed = text.trim();
  if (trimmed.length > 0 && trimmed.length <= 512) grams.add(asciiLower(trimmed));
  const splits = [
    trimmed.split(/\s+/).map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')),
    trimmed.match(/[\p{L}\p{N}]+/gu) ?? [],
  ];
  for (const words of splits) {
    for (let i = 0; i < words.length && grams.size < MAX_GRAMS; i++) {
      for (let n = 1; n <= MAX_WORDS && i + n <= words.length; n++) {
        const gram = words.slice(i, i + n).join(' ');
        if (gram.length > 0) grams.add(asciiLower(gram));
      }
    }
  }
  return [...grams];
}
