// Progress on stderr (stdout may be carrying the export itself). cli-progress draws only when
// stderr is a terminal, so pipes, CI logs and tests get no control characters; --quiet turns
// it off on a terminal too.
import cliProgress from 'cli-progress';

export interface Progress {
  tick(count?: number): void;
  stop(): void;
}

export function progressBar(label: string, total: number, quiet: boolean): Progress {
  if (quiet || total === 0) return { tick() {}, stop() {} };
  const bar = new cliProgress.SingleBar({
    format: `${label} [{bar}] {percentage}% | {value}/{total} rows | {eta_formatted} left`,
    stream: process.stderr,
    hideCursor: true,
    etaBuffer: 200,
  }, cliProgress.Presets.shades_classic);
  bar.start(total, 0);
  return {
    tick: (count = 1) => bar.increment(count),
    stop: () => bar.stop(),
  };
}
