// Recall quality benches.
//
//   npm run bench:quality                 both: real conversations (LoCoMo dev, when present), then synthetic
//   npm run bench:quality -- locomo       real conversations only (see locomo.ts; BENCH_LOCOMO_DIR overrides the path)
//   npm run bench:quality -- synthetic    the synthetic regression corpus only (see synthetic.ts)
//   ... -- --hash                         hashing embedder instead of USE-lite, for comparison
import { runLocomo } from './locomo.js';
import { runSynthetic } from './synthetic.js';

const useHash = process.argv.includes('--hash');
const only = process.argv.find((a) => a === 'locomo' || a === 'synthetic');
if (only !== 'synthetic') await runLocomo(useHash ? 'hash' : 'use');
if (only !== 'locomo') await runSynthetic(useHash);
