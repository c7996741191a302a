// `explain: true` on recall: for each returned memory, what every ranking stage added to its
// score, so an operator can see why it is there. Built only when asked, from the values the
// ranking already computed (no stage is re-run), for the `limit` memories returned; the
// default path does none of this. The contributions add up to the score the ranking used:
// lexical, vector and feedback (the cosine to the query moved towards the best candidates,
// dense-feedback.ts) are the terms of the weighted mean (fuse.ts), then the adjacent-turn
// lift, the session's share, the entity prior, the tie-break and, on a question asking for a
// time, what a memory that says when gains (time-evidence.ts) are added to it (engine.ts).
import type { Explanation } from '../../shared/schemas.js';
import { normalised, type SignalScores } from './fuse.js';
import type { Proposal } from '../port/candidates.js';

/** What the ranking computed, kept by the engine for explain (all of it existed already). */
export interface RankingTrace {
  lexical: Proposal[];
  nearest: Proposal[];
  /** Raw cosine of every candidate that has a vector (KNN's or looked up). */
  cosine: Map<number, number>;
  /** The signals the final weighted mean was computed from: [bm25, vector] and, when on, dense feedback. */
  signals: SignalScores[];
  fused: Map<number, number>;
  lifted: Map<number, number>;
  /** Each candidate's share of its session's score (session-evidence.ts). */
  session: ReadonlyMap<number, number>;
  prior: (rowid: number) => number;
  tieBreak: (rowid: number) => number;
  /** What each memory that says when gained on a question asking for a time (empty otherwise). */
  when: ReadonlyMap<number, number>;
  weights: { adjacent: number; session: number; entity: number; strength: number; when: number; feedback: number };
}

/** One explanation per rowid, in the given order. */
export function explainScores(rowids: number[], trace: RankingTrace): Explanation[] {
  const [lexical, vector, feedback] = trace.signals.map((signal) => ({
    signal, normal: signal.weight > 0 && signal.scores.size > 0 ? normalised(signal) : null,
  }));
  const rankIn = (list: Proposal[], rowid: number) => {
    const index = list.findIndex((p) => p.rowid === rowid);
    return index < 0 ? null : index + 1;
  };
  return rowids.map((rowid) => {
    // The weighted mean's denominator: the weights of the signals that know this memory.
    let known = 0;
    // feedback is absent when the recall had none (off, or no vector among the best yet).
    for (const term of [lexical, vector, feedback]) if (term?.normal?.has(rowid)) known += term.signal.weight;
    const meanTerm = (term: typeof lexical | undefined) => {
      if (!term) return 0;
      const { signal, normal } = term;
      const value = normal?.get(rowid);
      return value === undefined || known === 0 ? 0 : (signal.weight * value) / known;
    };
    const fused = trace.fused.get(rowid) ?? 0;
    const adjacent = (trace.lifted.get(rowid) ?? fused) - fused;
    const session = trace.session.get(rowid) ?? 0;
    const entity = trace.prior(rowid);
    const tieBreak = trace.tieBreak(rowid);
    const when = trace.when.get(rowid) ?? 0;
    const lexicalRaw = lexical.signal.scores.get(rowid);
    const parts = [
      { signal: 'lexical' as const, rank: rankIn(trace.lexical, rowid), raw: lexicalRaw ?? null, weight: lexical.signal.weight, contribution: meanTerm(lexical) },
      { signal: 'vector' as const, rank: rankIn(trace.nearest, rowid), raw: trace.cosine.get(rowid) ?? null, weight: vector.signal.weight, contribution: meanTerm(vector) },
      // raw: the cosine to the moved query; null when the recall had no feedback (off, or none of the best had a vector yet).
      { signal: 'feedback' as const, rank: null, raw: feedback?.signal.scores.get(rowid) ?? null, weight: feedback?.signal.weight ?? trace.weights.feedback, contribution: meanTerm(feedback) },
      // raw: the best neighbouring turn's fused score, which the lift is a fraction of.
      { signal: 'adjacent' as const, rank: null, raw: trace.weights.adjacent > 0 ? adjacent / trace.weights.adjacent : null, weight: trace.weights.adjacent, contribution: adjacent },
      // raw: the session's score as a share of the best session's.
      { signal: 'session' as const, rank: null, raw: trace.weights.session > 0 ? session / trace.weights.session : null, weight: trace.weights.session, contribution: session },
      { signal: 'entity' as const, rank: null, raw: null, weight: trace.weights.entity, contribution: entity },
      // raw: confidence × recency among the candidates.
      { signal: 'tie_break' as const, rank: null, raw: trace.weights.strength > 0 ? tieBreak / trace.weights.strength : null, weight: trace.weights.strength, contribution: tieBreak },
      // raw: 1 when the memory's text says when and the query asked for a time, else 0.
      { signal: 'time' as const, rank: null, raw: when > 0 ? 1 : 0, weight: trace.weights.when, contribution: when },
    ];
    return { score: fused + adjacent + session + entity + tieBreak + when, signals: parts };
  });
}
