// Recall quality benches.
//
//   npm run bench:quality                 both: real conversations (LoCoMo dev, when present), then synthetic
//   npm run bench:quality -- locomo       real conversations only (see locomo.ts; BENCH_LOCOMO_DIR overrides the path)
//   npm run bench:quality -- synthetic    the synthetic regression corpus only (see synthetic.ts)
//   npm run bench:quality -- locomo-time  LoCoMo imported with each session's real date vs undated (see locomo-time.ts)
//   ... -- --embedder use-static|glove|hash          another embedder than the default (--hash = --embedder hash)
//   npm run bench:quality -- dense        each dense signal alone, on both, with its cost (see dense.ts)
//   ... -- locomo --baseline-dist <dir>   recall latency of this build vs another build's dist/,
//                                         asked alternately in one run (see latency-ab.ts)
import { runDense } from './dense.js';
import { runLatencyComparison } from './latency-ab.js';
import { runLocomo } from './locomo.js';
import { runLocomoTime } from './locomo-time.js';
import { runSynthetic, type BenchEmbedder } from './synthetic.js';

const chosen = process.argv.includes('--embedder') ? process.argv[process.argv.indexOf('--embedder') + 1] : process.argv.includes('--hash') ? 'hash' : 'use';
if (!['use', 'use-static', 'glove', 'hash'].includes(chosen)) throw new Error(`--embedder must be use, use-static, glove or hash, got ${chosen}`);
const embedder = chosen as BenchEmbedder;
const only = process.argv.find((a) => a === 'locomo' || a === 'synthetic' || a === 'dense');
const flag = process.argv.indexOf('--baseline-dist');
const baselineDist = flag >= 0 ? process.argv[flag + 1] : undefined;
if (flag >= 0 && !baselineDist) throw new Error('--baseline-dist needs a folder: the dist/ of another build');
if (process.argv.includes('locomo-time')) await runLocomoTime(embedder);
else if (only === 'dense') await runDense();
else if (baselineDist) await runLatencyComparison(baselineDist, embedder);
else {
  if (only !== 'synthetic') await runLocomo(embedder);
  if (only !== 'locomo') await runSynthetic(embedder);
}
