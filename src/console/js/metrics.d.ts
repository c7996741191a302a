// Types of metrics.js for the Node tests that import it (the browser loads the .js as is).
export interface Sample { name: string; labels: Record<string, string>; value: number }
export interface Histogram { buckets: Array<[number, number]>; count: number; sum: number }
export const LATENCY_METRIC: string;
export function parseSamples(text: string): Sample[];
export function histogramsByRoute(samples: Sample[], name?: string, keep?: (route: string) => boolean): Map<string, Histogram>;
export function mergeHistograms(histograms: Iterable<Histogram>): Histogram;
export function histogramDelta(now: Histogram, before: Histogram | null): Histogram;
export function quantile(histogram: Histogram, q: number): number | null;
