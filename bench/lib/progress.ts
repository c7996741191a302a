// Progress of long phases on stderr, so stdout stays the clean result tables. On a terminal
// one line is rewritten in place; elsewhere (CI logs, files) a line is printed every 10%.

export interface Progress {
  (done: number): void;
  done(): void;
}

export function progress(label: string, total: number): Progress {
  const tty = process.stderr.isTTY === true;
  const started = performance.now();
  let lastDecile = -1;
  let last = 0;
  const line = (done: number) => {
    const seconds = (performance.now() - started) / 1000;
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
    return `[bench] ${label}: ${done.toLocaleString('en')}/${total.toLocaleString('en')} (${pct}%) ${seconds.toFixed(1)} s`;
  };
  const update = ((done: number) => {
    last = done;
    if (tty) {
      process.stderr.write(`\r${line(done)}\x1b[K`);
      return;
    }
    const decile = Math.floor((done / Math.max(1, total)) * 10);
    if (decile > lastDecile) {
      lastDecile = decile;
      process.stderr.write(`${line(done)}\n`);
    }
  }) as Progress;
  update.done = () => {
    if (tty) process.stderr.write(`\r${line(last)}\x1b[K\n`);
    else if (lastDecile < 10) process.stderr.write(`${line(last)}\n`);
  };
  return update;
}

/** A one-line note on stderr. */
export function note(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
