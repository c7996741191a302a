// The recall pipeline (see README "Recall engine"):
// 1. candidates: bm25's top D and the vector signal's top D (D = max(50, 4 × limit)); a faint
//    vector match counts only when bm25 proposes it too or it links an entity the query names;
//    the memories of an entity the query names join when it has at most D of them;
// 2. every candidate is scored on every signal that knows it (cosine by point lookup), scores
//    normalised per signal and fused by a weighted mean over the signals that know the memory;
//    dense feedback adds a third signal: the cosine to the query vector moved towards the best
//    candidates' vectors (dense-feedback.ts);
// 3. conversation context: the turns near the best candidates join, and each turn is lifted by
//    a fraction of the best score among its near turns and by its session's score as a whole;
// 4. entity links as a small prior, and who said it: what a person the query names said, or what
//    was said about them (owner or mention links, not mere participation) gains; strength and
//    recency only break near-ties;
// 5. a question asking for a time ("when did …"): the best memories whose text says when gain
//    (time-evidence.ts).
// Nothing here reads last access or stability: recalling never changes what a recall returns.
// Filters (namespace, archived, entity, types) are applied inside each candidate query.
// Storage is reached only through the read port (read-port.ts): the same engine ranks over
// the SQLite file and over PostgreSQL.
import type { Explanation, MemoryRecord, MemoryType } from '../../shared/schemas.js';
import { explainScores } from './explain.js';
import type { MemoryRow } from '../port/rows.js';
import type { OnServed, ReadPort, RecallReads } from '../port/read-port.js';
import { fuseScores, type SignalScores } from './fuse.js';
import { liftedByNeighbours, NEIGHBOUR_REACH } from './conversation.js';
import { entityPrior } from './entity-prior.js';
import { sessionEvidence } from './session-evidence.js';
import { queryTerms } from './query-text.js';
import { whoSaidIt } from './who-said-it.js';
import { feedbackVector, FEEDBACK_DOCS } from './dense-feedback.js';
import { asksForTime, timeEvidence } from './time-evidence.js';
import { validNow, type CandidateRow, type Proposal, type RecallCodes, type RecallContext, type TimeFilter } from '../port/candidates.js';
import { isoWithOffset } from '../../shared/text.js';
import type { StageTimings } from '../../shared/protocol/pool.js';
import { timed, timedAsync } from '../port/timing.js';
import { ResponseBudget, type Budgeted } from '../port/response-budget.js';
export interface RecallRequest {
  query: string;
  entity: string | null;
  types: MemoryType[] | null;
  limit: number;
  /** The query's embedding, computed once by the caller; null to recall without vectors. */
  queryVector: Float32Array | null;
  /** Which memories are valid when (as_of, include_superseded, since, until); absent: valid now. */
  time?: TimeFilter;
  /** Attach each hit's explanation (explain.ts); off by default, and then nothing is built for it. */
  explain?: boolean;
  /** A write position the recall must see (read-your-writes on PostgreSQL replicas). */
  after?: string;
  /** Told which side served the recall's snapshot when replicas are configured (metrics). */
  onServed?: OnServed;
  /** The shared vector codes the recall's task was lent (SQLite; see RecallCodes). */
  vectorCodes?: RecallCodes;
}

export interface RecallHit {
  row: MemoryRow;
  score: number;
  explanation?: Explanation;
}

/**
 * Fusion weights, tuned on the LoCoMo dev conversations (bench:quality), each on a flat optimum:
 * bm25 and vector are the weighted mean's weights; adjacent: fraction of the best score among a
 * turn's neighbours (same session, at most NEIGHBOUR_REACH away) it gains (conversation.ts); session: what
 * a turn of the best-scoring session gains (session-evidence.ts);
 * entity: the entity prior; said: what a memory by or about a named person gains (who-said-it.ts);
 * strength: the tie-break; feedback: the weight, in the mean beside bm25 and vector, of the cosine to
 * the query moved `rocchio` of the way towards the best candidates (dense-feedback.ts); when: what a
 * memory whose text says when gains on a question asking for a time (time-evidence.ts).
 * bm25 outweighs the dense terms and the tie-break together (0.6 > 0.4 + 0.17 + 0.02): among
 * near-identical facts the embedding cannot tell apart, the one holding the query's rare word
 * must not fall below memories holding none of its words (test/recall-unique-word.test.ts).
 * Feedback at 0.3 broke that; 0.17 is the largest round weight that keeps it (LoCoMo R@10 76.9
 * / 77.0 / 77.2 at 0.15 / 0.17 / 0.19, docs/recall-extraction-consolidation.md).
 */
export const SIGNAL_WEIGHTS = { bm25: 0.6, vector: 0.4, adjacent: 0.3, entity: 0.1, strength: 0.02, session: 0.5, said: 1, feedback: 0.17, rocchio: 0.5, when: 0.3 } as const;
export type SignalName = keyof typeof SIGNAL_WEIGHTS;

export interface EngineOptions {
  /** Restrict to some signals (quality benchmarks measure each alone). */
  only?: readonly SignalName[];
  /** Override fusion weights (quality benchmarks tune them). */
  weights?: Partial<Record<SignalName, number>>;
  /** How many turns away a neighbour lifts a turn (quality benchmarks tune it; NEIGHBOUR_REACH by default). */
  reach?: number;
  /** Each retrieval signal's least depth (quality benchmarks measure deeper candidate sets; MIN_DEPTH by default). */
  minDepth?: number;
}

/** Placeholder of the stages kept for explain, shared so that the default path allocates nothing for them. */
const NOTHING = (): number => 0;
const NO_BONUS: ReadonlyMap<number, number> = new Map();
const NO_ROWS: ReadonlySet<number> = new Set();

/** Each retrieval signal proposes this many times `limit` candidates (at least MIN_DEPTH). */
const DEPTH_FACTOR = 4;
const MIN_DEPTH = 50;
/** The adjacent turns of this many times `limit` best candidates (at least MIN_EXPANDED) join. */
const EXPAND_FACTOR = 2;
const MIN_EXPANDED = 20;
/**
 * A question asking for a time re-ranks this many times `limit` best memories (at least MIN_WHEN,
 * at most MAX_WHEN: their text is read and parsed) by whether they say when.
 */
const WHEN_FACTOR = 3;
const MIN_WHEN = 30;
const MAX_WHEN = 200;
/**
 * Whole rows read by the first query once ranked (at 100,000-character facts ~1.6 MB). Each next
 * chunk doubles — a limit-1000 recall of short facts takes 7 statements, not 63 — but holds no
 * more rows than the budget left has room for at the largest row read so far.
 */
const FIRST_HYDRATE_CHUNK = 16;

export class RecallEngine {
  private readonly useBm25: boolean;
  private readonly useVector: boolean;
  private readonly weights: Record<SignalName, number>;
  private readonly reach: number;
  private readonly minDepth: number;

  constructor(private readonly port: ReadPort, options: EngineOptions = {}) {
    const use = (name: SignalName) => !options.only || options.only.includes(name);
    this.weights = Object.fromEntries(Object.entries({ ...SIGNAL_WEIGHTS, ...options.weights })
      .map(([name, weight]) => [name, use(name as SignalName) ? weight : 0])) as Record<SignalName, number>;
    this.reach = Math.max(1, Math.floor(options.reach ?? NEIGHBOUR_REACH));
    this.minDepth = Math.max(1, Math.floor(options.minDepth ?? MIN_DEPTH));
    this.useBm25 = use('bm25');
    this.useVector = use('vector');
  }

  /**
   * One snapshot per recall: the IVF cells probed and the vectors scanned agree, even if the
   * indexer moves vectors between cells meanwhile.
   */
  async recall(request: RecallRequest, now = Date.now(), timings: StageTimings = {}): Promise<RecallHit[]> {
    return (await this.recallWithin(request, Infinity, now, timings)).kept;
  }

  /**
   * The hits in rank order while their JSON fits `budgetBytes` (SERVICE_MAX_RESPONSE_BYTES): rows
   * are read a chunk at a time and reading stops at the budget, so a maximal recall (1000
   * facts of 100,000 characters) holds about the budget, not every ranked row.
   */
  recallWithin(request: RecallRequest, budgetBytes: number, now = Date.now(), timings: StageTimings = {}): Promise<Budgeted<RecallHit>> {
    return this.port.snapshot(async (reads) => {
      const ranked = await this.ranked(reads, request, now, timings);
      return timedAsync(timings, 'hydrate', () => this.hydrated(reads, ranked, budgetBytes));
    }, { after: request.after, onServed: request.onServed });
  }

  /** Whole rows of the ranked hits, in rank order, read a chunk at a time until the budget is spent. */
  private async hydrated(reads: RecallReads, ranked: Ranked[], budgetBytes: number): Promise<Budgeted<RecallHit>> {
    const budget = new ResponseBudget<RecallHit>((hit) => hit.row.content, budgetBytes,
      // An explanation is ~600 bytes of JSON: counted, or explain:true answers ran ~25% over the budget.
      (hit) => (hit.explanation ? JSON.stringify(hit.explanation).length : 0));
    let size = FIRST_HYDRATE_CHUNK;
    let readChars = 0;
    let largest = 1;
    for (let start = 0; start < ranked.length; start += size) {
      if (start > 0) size = Math.max(1, Math.min(size * 2, Math.floor((budgetBytes - readChars) / largest)));
      const chunk = ranked.slice(start, start + size);
      const rows = new Map((await reads.rows(chunk.map((r) => r.rowid))).map((row) => [row.rowid, row]));
      for (const row of rows.values()) {
        readChars += row.content.length;
        largest = Math.max(largest, row.content.length);
      }
      for (const { rowid, score, explanation } of chunk) {
        const row = rows.get(rowid);
        if (row && !budget.take(explanation ? { row, score, explanation } : { row, score })) return budget.result();
      }
    }
    return budget.result();
  }

  /** Rowids and scores of the best `limit` memories, best first (explained if asked); no content is read. */
  private async ranked(reads: RecallReads, request: RecallRequest, now: number, timings: StageTimings): Promise<Ranked[]> {
    let entityId: string | null = null;
    if (request.entity !== null) {
      const entity = await reads.entity(request.entity);
      // An entity nothing was ever stored for has no memories: an empty answer, not an error.
      if (!entity) return [];
      entityId = entity.id;
    }
    if (request.types && request.types.length === 0) return [];
    const ctx: RecallContext = {
      query: request.query,
      terms: queryTerms(request.query),
      queryVector: this.useVector ? request.queryVector : null,
      // The filter entity tells no candidate apart: every one of them is linked to it.
      queryEntityIds: (await reads.entitiesNamedIn(request.query)).filter((id) => id !== entityId),
      filter: { entityId, types: request.types && request.types.length > 0 ? request.types : null, time: request.time ?? validNow(now) },
      depth: Math.max(this.minDepth, request.limit * DEPTH_FACTOR),
      now,
      timings,
      ...(request.vectorCodes ? { codes: request.vectorCodes } : {}),
    };
    const w = this.weights;

    // 1. Candidates.
    const lexical: Proposal[] = this.useBm25 ? await timedAsync(timings, 'bm25', () => reads.lexical(ctx)) : [];
    const nearest: Proposal[] = this.useVector ? await timedAsync(timings, 'vector', () => reads.nearest(ctx)) : [];
    const lexicalScores = new Map(lexical.map((p) => [p.rowid, p.score]));
    const [namedLinks, members] = await timedAsync(timings, 'graph', () => Promise.all([
      reads.linked(nearest.filter((p) => p.weak).map((p) => p.rowid), ctx.queryEntityIds),
      w.entity > 0 ? reads.membersOfFew(ctx.queryEntityIds, ctx.depth, ctx.filter) : [],
    ]));
    const proposed = new Set([
      ...lexicalScores.keys(),
      ...nearest.filter((p) => !p.weak || lexicalScores.has(p.rowid) || namedLinks.has(p.rowid)).map((p) => p.rowid),
      ...members,
    ]);
    if (proposed.size === 0) return [];

    // 2. Every candidate on every signal, fused. Cosines KNN did not give are looked up.
    const cosine = new Map(nearest.map((p) => [p.rowid, p.score]));
    // Dense feedback (set once the first fusion has ranked): the moved query and its cosines.
    let moved: Float32Array | null = null;
    const movedCosine = new Map<number, number>();
    const scoredOn = async (rowids: number[]): Promise<SignalScores[]> => {
      const unknown = rowids.filter((rowid) => !cosine.has(rowid));
      if (ctx.queryVector && this.useVector && unknown.length > 0) {
        for (const [rowid, similarity] of await reads.similarities(ctx.queryVector, unknown)) cosine.set(rowid, similarity);
      }
      // bm25 knows every candidate: one it did not match has no lexical evidence (0).
      const lexicalKnown = lexical.length === 0 ? new Map<number, number>() : new Map(rowids.map((r) => [r, lexicalScores.get(r) ?? 0]));
      const signals: SignalScores[] = [
        { weight: w.bm25, scores: lexicalKnown, scale: 'ratio' },
        { weight: w.vector, scores: scoresOf(cosine, rowids), scale: 'range' },
      ];
      if (moved) {
        const unscored = rowids.filter((rowid) => !movedCosine.has(rowid));
        if (unscored.length > 0) for (const [rowid, similarity] of await reads.similarities(moved, unscored)) movedCosine.set(rowid, similarity);
        signals.push({ weight: w.feedback, scores: scoresOf(movedCosine, rowids), scale: 'range' });
      }
      return signals;
    };
    let candidates = [...proposed];
    let signals = await timedAsync(timings, 'vector', () => scoredOn(candidates));
    let fused = fuseScores(candidates, signals);

    // 2b. Dense feedback: the best candidates say more of what the question is after than its words.
    // It re-scores the candidates and proposes none (a second KNN with the moved query found
    // nothing that reached the top 10 and its extra faint candidates flattened the cosine scale).
    if (w.feedback > 0 && w.rocchio > 0 && this.useVector && ctx.queryVector) {
      const best = [...fused].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, FEEDBACK_DOCS).map(([rowid]) => rowid);
      const vectors = await timedAsync(timings, 'vector', () => reads.vectors(best));
      const feedback = best.flatMap((rowid) => vectors.get(rowid) ?? []);
      // None of the best has a vector yet (just written), or only zero-length ones (no direction
      // to move in): no feedback, rather than a second copy of the query's own cosine under
      // another weight.
      const towards = feedback.length > 0 ? feedbackVector(ctx.queryVector, feedback, w.rocchio) : ctx.queryVector;
      if (towards !== ctx.queryVector) {
        moved = towards;
        signals = await timedAsync(timings, 'vector', () => scoredOn(candidates));
        fused = fuseScores(candidates, signals);
      }
    }

    // 3. Conversation context: the turns near the best candidates join, then every turn is lifted by its neighbours.
    if (w.adjacent > 0) {
      const best = [...fused].sort((a, b) => b[1] - a[1]).slice(0, Math.max(MIN_EXPANDED, request.limit * EXPAND_FACTOR)).map(([rowid]) => rowid);
      const added = (await reads.adjacent(best, ctx.filter, this.reach)).filter((rowid) => !fused.has(rowid));
      if (added.length > 0) {
        candidates = [...candidates, ...added];
        signals = await timedAsync(timings, 'vector', () => scoredOn(candidates));
        fused = fuseScores(candidates, signals);
      }
    }
    const rows = new Map((await timedAsync(timings, 'hydrate', () => reads.positions(candidates))).map((row) => [row.rowid, row]));
    const linkedToNamed = await timedAsync(timings, 'fusion', () => reads.linked(candidates, ctx.queryEntityIds));
    // Who said it: what a person the query names said, or what was said about them (who-said-it.ts).
    const about = w.said > 0 && ctx.queryEntityIds.length > 0
      ? await timedAsync(timings, 'fusion', () => reads.about(candidates, ctx.queryEntityIds)) : NO_ROWS;
    const said = whoSaidIt(candidates, about, w.said);

    // Kept outside the stage for explain (assigned, not allocated: the default path pays nothing).
    let lifted = fused;
    let session: ReadonlyMap<number, number> = NO_BONUS;
    let prior: (rowid: number) => number = NOTHING;
    let tieBreak: (row: CandidateRow) => number = NOTHING;
    const scored = timed(timings, 'fusion', () => {
      lifted = liftedByNeighbours(rows, fused, w.adjacent, this.reach);
      session = sessionEvidence(rows, fused, w.session);
      // 4. Entity prior and tie-break.
      prior = entityPrior(candidates, linkedToNamed, w.entity);
      tieBreak = timed(timings, 'strength', () => strengthTieBreak([...rows.values()], w.strength));
      return [...rows.values()]
        .map((row) => ({ rowid: row.rowid, score: (lifted.get(row.rowid) ?? 0) + (session.get(row.rowid) ?? 0) + prior(row.rowid) + (said.get(row.rowid) ?? 0) + tieBreak(row) }))
        .sort((a, b) => b.score - a.score || b.rowid - a.rowid);
    });
    // 5. A question asking for a time: the best memories whose text says when gain (time-evidence.ts).
    let when: ReadonlyMap<number, number> = NO_BONUS;
    if (w.when > 0 && asksForTime(request.query)) {
      const top = scored.slice(0, Math.min(MAX_WHEN, Math.max(MIN_WHEN, request.limit * WHEN_FACTOR)));
      const texts = await timedAsync(timings, 'hydrate', () => reads.rows(top.map((r) => r.rowid)));
      when = timed(timings, 'fusion', () => timeEvidence(texts, w.when));
      if (when.size > 0) {
        for (const r of top) r.score += when.get(r.rowid) ?? 0;
        top.sort((a, b) => b.score - a.score || b.rowid - a.rowid);
        scored.splice(0, top.length, ...top);
      }
    }
    const ranked = scored.slice(0, request.limit);
    if (!request.explain) return ranked;
    const explanations = explainScores(ranked.map((r) => r.rowid), {
      // The entity contribution: the prior and who said it, both from the query's named entities' links.
      lexical, nearest, cosine, signals, fused, lifted, session, prior: (rowid) => prior(rowid) + (said.get(rowid) ?? 0), weights: w,
      tieBreak: (rowid) => tieBreak(rows.get(rowid)!), when,
    });
    return ranked.map((r, i) => ({ ...r, explanation: explanations[i] }));
  }
}

/** The scores of these memories that `scores` holds (a loop: fusion runs up to three times a recall). */
function scoresOf(scores: ReadonlyMap<number, number>, rowids: readonly number[]): Map<number, number> {
  const known = new Map<number, number>();
  for (const rowid of rowids) {
    const score = scores.get(rowid);
    if (score !== undefined) known.set(rowid, score);
  }
  return known;
}

/** A ranked memory before its row is read. */
interface Ranked {
  rowid: number;
  score: number;
  explanation?: Explanation;
}


/**
 * confidence × recency (created_at, scaled over the candidates) × weight: settles near-ties in
 * favour of trusted, newer memories. Deliberately not FSRS retrievability or last access: those
 * move with every recall, so ranking on them made results depend on what was asked before.
 */
function strengthTieBreak(rows: CandidateRow[], weight: number): (row: CandidateRow) => number {
  if (weight <= 0 || rows.length === 0) return () => 0;
  // A loop, not Math.min(...spread): a spread of 100k+ candidates overflows the stack.
  let oldest = Infinity;
  let newest = -Infinity;
  for (const r of rows) {
    oldest = Math.min(oldest, r.created_at);
    newest = Math.max(newest, r.created_at);
  }
  const span = newest - oldest;
  return (row) => weight * row.confidence * (span > 0 ? (row.created_at - oldest) / span : 1);
}

/** The public Memory shape. `score` is null where no ranking happened (inspect). */
export function toMemory(row: MemoryRow, score: number | null, explanation?: Explanation): MemoryRecord {
  const memory: MemoryRecord = {
    id: row.id,
    content: row.content,
    memory_type: row.memory_type,
    confidence: row.confidence,
    stability: row.stability,
    score: score === null ? null : Math.round(score * 1e6) / 1e6,
    occurred_at: isoWithOffset(row.occurred_at),
  };
  if (row.memory_type === 'semantic') {
    memory.valid_until = row.valid_until === null ? null : isoWithOffset(row.valid_until);
    memory.superseded_by = row.superseded_by;
  }
  if (row.memory_type === 'episodic' && row.episode_id !== null) {
    memory.episode_id = row.episode_id;
    if (row.role !== null) memory.role = row.role;
  }
  if (explanation) memory.explanation = explanation;
  return memory;
}
