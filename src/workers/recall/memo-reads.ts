// One recall ranked twice (the plain ranking's first ranks, then the expansion's: engine.ts)
// asks the same candidate reads twice: the second time they are answered from memory.
import type { RecallReads } from '../port/read-port.js';

export function memoReads(reads: RecallReads): RecallReads {
  const once = new Map<string, Promise<unknown>>();
  const memo = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let answer = once.get(key) as Promise<T> | undefined;
    if (!answer) once.set(key, answer = read());
    return answer;
  };
  const byVector = new Map<Float32Array, Promise<unknown>>();
  const cosines = new Map<Float32Array, Map<number, number>>();
  return {
    ...reads,
    entity: (name) => memo(`entity\u0000${name}`, () => reads.entity(name)),
    entitiesNamedIn: (text) => memo(`named\u0000${text}`, () => reads.entitiesNamedIn(text)),
    lexical: (ctx) => memo('lexical', () => reads.lexical(ctx)),
    nearest: (ctx) => {
      if (!ctx.queryVector) return reads.nearest(ctx);
      let answer = byVector.get(ctx.queryVector) as ReturnType<RecallReads['nearest']> | undefined;
      if (!answer) byVector.set(ctx.queryVector, answer = reads.nearest(ctx));
      return answer;
    },
    membersOfFew: (entityIds, depth, filter) => memo('members', () => reads.membersOfFew(entityIds, depth, filter)),
    similarities: async (vector, rowids) => {
      let known = cosines.get(vector);
      if (!known) cosines.set(vector, known = new Map());
      const unknown = rowids.filter((rowid) => !known!.has(rowid));
      for (const [rowid, similarity] of await reads.similarities(vector, unknown)) known.set(rowid, similarity);
      const out = new Map<number, number>();
      for (const rowid of rowids) { const s = known.get(rowid); if (s !== undefined) out.set(rowid, s); }
      return out;
    },
  };
}
