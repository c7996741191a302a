// Recall quality benches.
//
//   npm run bench:quality                 both: real conversations (LoCoMo dev, when present), then synthetic
//   npm run bench:quality -- locomo       real conversations only (see locomo.ts; BENCH_LOCOMO_DIR overrides the path)
//   npm run bench:quality -- synthetic    the synthetic regression corpus only (see synthetic.ts)
//   ... -- --hash                         hashing embedder instead of USE-lite, for comparison
//   ... -- locomo --baseline-dist <dir>   recall latency of this build vs another build's dist/,
//                                         asked alternately in one run (see latency-ab.ts)
import { runLatencyComparison } from './latency-ab.js';
import { runLocomo } from './locomo.js';
import { runSynthetic } from './synthetic.js';

const useHash = process.argv.includes('--hash');
const only = process.argv.find((a) => a === 'locomo' || a === 'synthetic');
const flag = process.argv.indexOf('--baseline-dist');
const baselineDist = flag >= 0 ? process.argv[flag + 1] : undefined;
if (flag >= 0 && !baselineDist) throw new Error('--baseline-dist needs a folder: the dist/ of another build');
if (baselineDist) await runLatencyComparison(baselineDist, useHash ? 'hash' : 'use');
else {
  if (only !== 'synthetic') await runLocomo(useHash ? 'hash' : 'use');
  if (only !== 'locomo') await runSynthetic(useHash);
}
