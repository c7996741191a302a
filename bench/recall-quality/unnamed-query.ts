// A query's vector without the people it names (issue 29, seventh step). Who-said-it already
// lifts what a named person said (entity links); the query's cosine then only has to say what is
// asked about them. With the name in the query, every turn of that person (each stored as
// "Name: …" on LoCoMo, or linked to them) is near it for the name's sake alone. Two ways, both
// measured: the question re-embedded without the names (`noname`), or the names' own vectors
// projected out of the query's (`proj`: no second embedding of the query, one per name).

const escaped = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The names (of those given) the text holds as whole words, any case. */
export function namesIn(text: string, names: readonly string[]): string[] {
  return names.filter((name) => new RegExp(`(^|[^\\p{L}\\p{N}])${escaped(name)}($|[^\\p{L}\\p{N}])`, 'iu').test(text));
}

/** The text with those names (and a possessive 's) taken out; the text itself when nothing else is left. */
export function withoutNames(text: string, names: readonly string[]): string {
  let out = text;
  for (const name of names) out = out.replace(new RegExp(`(^|[^\\p{L}\\p{N}])${escaped(name)}('s|’s)?(?=$|[^\\p{L}\\p{N}])`, 'giu'), '$1 ');
  out = out.replace(/\s+/g, ' ').trim();
  return /[\p{L}\p{N}]/u.test(out) ? out : text;
}

const unit = (v: Float32Array): Float32Array => {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return v.map((x) => x / norm);
};

/** unit(q − share × Σ (q·n̂) n̂) over the names' vectors, each against what is left of q. */
export function projectedOut(query: Float32Array, nameVectors: readonly Float32Array[], share: number): Float32Array {
  let q = unit(query);
  for (const name of nameVectors) {
    const n = unit(name);
    let dot = 0;
    for (let d = 0; d < q.length; d++) dot += q[d] * n[d];
    q = unit(q.map((x, d) => x - share * dot * n[d]));
  }
  return q;
}

/** (1 − share) of one unit vector and share of the other, as a unit vector. */
export function mixed(a: Float32Array, b: Float32Array, share: number): Float32Array {
  const [ua, ub] = [unit(a), unit(b)];
  return unit(ua.map((x, d) => (1 - share) * x + share * ub[d]));
}
