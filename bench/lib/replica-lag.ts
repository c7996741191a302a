// Replica lag under a write stream, as the time from a WAL position being written on the primary
// to it being replayed on the streaming replica (what a recall with read-your-writes waits for).
// Two polling loops: the primary's pg_current_wal_lsn() and the replica's pg_last_wal_replay_lsn(),
// each stamped with the midpoint of its round trip. For every primary sample whose position moved
// on (idle samples are not lag), the lag is the time until the first replica sample at or past it.
// Resolution is one polling interval plus a round trip (a few ms). PostgreSQL's own view,
// pg_stat_replication.replay_lag (per standby feedback message), is sampled beside it as a check.
import type { Sql } from '../../src/workers/postgres/client.js';
import { percentile } from './load.js';

export interface LagSummary {
  /** Primary samples with new WAL (the population of the percentiles). */
  samples: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** pg_stat_replication.replay_lag while WAL moved: PostgreSQL's own measure. */
  reportedP50Ms: number;
  reportedP95Ms: number;
}

interface Sample { t: number; lsn: bigint }

/** '16/B374D848' → a number that orders as the position does. */
function lsnValue(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

export interface LagSampler {
  stop(): Promise<LagSummary>;
}

export function sampleReplicaLag(primary: Sql, replica: Sql, intervalMs = 5): LagSampler {
  const written: Sample[] = [];
  const replayed: Sample[] = [];
  const reported: number[] = [];
  let running = true;
  const pause = () => new Promise((resolve) => setTimeout(resolve, intervalMs));
  const poll = async (each: () => Promise<void>) => {
    while (running) {
      await each();
      await pause();
    }
  };
  const onPrimary = poll(async () => {
    const sent = performance.now();
    const [row] = await primary`SELECT pg_current_wal_lsn()::text AS lsn,
      (SELECT extract(epoch FROM replay_lag) * 1000 FROM pg_stat_replication LIMIT 1)::float8 AS lag`;
    const lsn = lsnValue(row!.lsn as string);
    const last = written.at(-1);
    if (last && lsn > last.lsn && row!.lag !== null) reported.push(Number(row!.lag));
    written.push({ t: (sent + performance.now()) / 2, lsn });
  });
  const onReplica = poll(async () => {
    const sent = performance.now();
    const [row] = await replica`SELECT pg_last_wal_replay_lsn()::text AS lsn`;
    replayed.push({ t: (sent + performance.now()) / 2, lsn: lsnValue(row!.lsn as string) });
  });
  return {
    async stop() {
      running = false;
      await Promise.all([onPrimary, onReplica]);
      const lags: number[] = [];
      let r = 0;
      for (let i = 1; i < written.length; i++) {
        const w = written[i]!;
        if (w.lsn <= written[i - 1]!.lsn) continue;
        // Both series grow in time and position, so the first replica sample at or past this
        // one (in both) never lies before the previous one's: the search only moves forward.
        while (r < replayed.length && (replayed[r]!.t < w.t || replayed[r]!.lsn < w.lsn)) r++;
        const hit = replayed[r];
        if (hit) lags.push(hit.t - w.t);
      }
      const sorted = Float64Array.from(lags).sort();
      const sortedReported = Float64Array.from(reported).sort();
      return {
        samples: lags.length,
        p50Ms: percentile(sorted, 50),
        p95Ms: percentile(sorted, 95),
        maxMs: sorted.length ? sorted[sorted.length - 1]! : NaN,
        reportedP50Ms: percentile(sortedReported, 50),
        reportedP95Ms: percentile(sortedReported, 95),
      };
    },
  };
}
