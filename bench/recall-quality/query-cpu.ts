// Per-query CPU of the query embedders, in one process: 200 distinct LoCoMo dev questions embedded
// one at a time (as a recall embeds its query) after 60 warm-up calls, two rounds, the embedders
// alternating round by round so load drifts hit them alike. use-static's cost does not depend on
// the table's values (a trained table costs what the distilled one does).
//
//   BENCH_LOCOMO_DIR=... node dist/bench/recall-quality/query-cpu.js
import { loadLocomo } from './locomo-data.js';
import { UseLiteEmbedder } from '../../src/workers/embedding/use-lite.js';
import { UseStaticEmbedder } from '../../src/workers/embedding/use-static.js';
import type { Embedder } from '../../src/workers/embedding/embedder.js';

const conversations = loadLocomo();
if (!conversations) throw new Error('LoCoMo dev data not found (BENCH_LOCOMO_DIR)');
const questions = [...new Set(conversations.flatMap((c) => c.questions.map((q) => q.text)))];
const warm = questions.slice(0, 60);
const measured = questions.slice(60, 260);
const embedders: Embedder[] = [await UseLiteEmbedder.load(), await UseStaticEmbedder.load()];
for (const e of embedders) for (const q of warm) await e.embed([q]);
const cpu = new Map<string, number[]>(embedders.map((e) => [e.id, []]));
for (let round = 0; round < 2; round++) {
  for (const e of round === 0 ? embedders : [...embedders].reverse()) {
    const started = process.cpuUsage();
    for (const q of measured) await e.embed([q]);
    const used = process.cpuUsage(started);
    cpu.get(e.id)!.push((used.user + used.system) / 1000 / measured.length);
  }
}
for (const [id, rounds] of cpu) console.log(`${id.padEnd(28)} ${rounds.map((ms) => ms.toFixed(3)).join(' / ')} ms CPU per query (round 1 / 2)`);
