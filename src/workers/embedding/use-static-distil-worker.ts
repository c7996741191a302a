// A one-off thread (use-static.ts distilToFile): distils the use-static table, writes it to the
// given cache place and exits, so tfjs's memory leaves with it.
import { workerData } from 'node:worker_threads';
import { distil, writeTable } from './use-static.js';

const { count, path } = workerData as { count: number; path: string };
if (writeTable(await distil(count), [path]) === null) throw new Error(`could not write the use-static table to ${path}`);
