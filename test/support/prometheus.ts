// Reading Prometheus text exposition in tests: sample values by metric name and labels.

export type Samples = Map<string, number>;

/** Every sample line, keyed as written: `name{a="1",b="2"}` (labels in exposition order). */
export function parseSamples(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** The value of the sample with this name whose labels include all of `labels` (0 when absent). */
export function sample(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const [key, value] of samples) {
    const brace = key.indexOf('{');
    const keyName = brace === -1 ? key : key.slice(0, brace);
    if (keyName !== name) continue;
    const keyLabels = brace === -1 ? '' : key.slice(brace);
    if (Object.entries(labels).every(([k, v]) => keyLabels.includes(`${k}="${v}"`))) {
      total += value;
      found = true;
    }
  }
  return found ? total : 0;
}

export function has(samples: Samples, name: string): boolean {
  return [...samples.keys()].some((key) => key === name || key.startsWith(`${name}{`));
}
