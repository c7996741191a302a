// The pool's PostgreSQL connections (`postgres`, porsager's client). Row ids are bigint in the
// schema (src/shared/postgres-schema.ts) but stay far below 2^53, so they are parsed as numbers:
// rows then look exactly like the SQLite adapter's to the engine, the handlers and the wire.
import postgres from 'postgres';

export type Sql = postgres.Sql<{ bigint: number }>;
export type Tx = postgres.TransactionSql<{ bigint: number }>;

/** int8 as a JavaScript number (count(*), sum() and every rowid). */
const bigintAsNumber = { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) };

export interface ReaderOptions {
  /** Connections this thread may open (a recall holds one for its snapshot). */
  max?: number;
  /** Bound on opening a connection (the client's default is 30 s). */
  connectTimeoutSeconds?: number;
  /** Called when one of the client's connections closes. */
  onClose?: () => void;
}

export function connectReader(url: string, { max = 4, connectTimeoutSeconds, onClose }: ReaderOptions = {}): Sql {
  return postgres(url, {
    max,
    ...(onClose ? { onclose: onClose } : {}),
    ...(connectTimeoutSeconds ? { connect_timeout: connectTimeoutSeconds } : {}),
    types: { bigint: bigintAsNumber },
    // Notices (e.g. "text-search query contains only stop words") are not errors of the recall.
    onnotice: () => {},
    connection: {
      application_name: 'memory-runtime pool',
      // The client prepares every statement; after five runs PostgreSQL may switch a statement
      // to a generic plan, and a generic plan cannot see which text-search terms or cells a
      // query names: the term counts then scanned the table (~45 ms a recall at 100k, against
      // ~2 ms planned per call). Planning each run costs well under a millisecond here.
      plan_cache_mode: 'force_custom_plan',
    },
  });
}
