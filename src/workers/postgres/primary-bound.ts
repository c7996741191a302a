// A bound on a pool read from the primary. A primary killed under an open connection can leave
// the client with a query that never settles (its socket gone, no error, no close), and without
// a replica to fall back to a recall on it would never answer. But a slow read is not a lost
// one, and the primary has nowhere else to go: so past the bound a new connection (not one of
// the pool's, which the slow read may be holding) asks the primary `SELECT 1` within the connect
// bound. A primary that answers is only slow, and the read goes on; one that does not has the
// read abandoned as a connection failure and its client dropped, so the hung query fails too.
/** How a thread bounds its reads on the primary. */
export interface PrimaryCheck {
  /** A read unfinished after this long has the primary asked whether it answers. */
  boundMs: number;
  /** null when the primary answers a new connection within the connect bound, else why not. */
  answers: () => Promise<string | null>;
  /** The primary was found not answering: drop its client (queries in flight on it fail). */
  lost: (error: Error) => void;
}

const TIMED_OUT = Symbol('timed out');

/** `reading`'s outcome, or a connection failure (code CONNECT_TIMEOUT) once it is past the bound and the primary does not answer. */
export async function withinPrimaryBound<T>(reading: Promise<T>, check: PrimaryCheck | null): Promise<T> {
  if (!check) return reading;
  const settled = reading.then((value) => ({ value }));
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => { timer = setTimeout(resolve, check.boundMs, TIMED_OUT); });
    try {
      const outcome = await Promise.race([settled, timedOut]);
      if (outcome !== TIMED_OUT) return outcome.value;
    } finally {
      clearTimeout(timer);
    }
    const cause = await check.answers();
    if (cause === null) continue;
    // Abandoned: whatever it ends with later (the dropped client fails it) is ignored.
    settled.catch(() => {});
    const error = Object.assign(new Error(`no primary answer within ${check.boundMs} ms (${cause})`), { code: 'CONNECT_TIMEOUT' });
    check.lost(error);
    throw error;
  }
}
