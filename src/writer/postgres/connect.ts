// Connections of the PostgreSQL adapter (the `postgres` client: several hosts in one URL with
// target_session_attrs, which is how a node finds the primary after a failover).
import postgres from 'postgres';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

/**
 * int8 columns (rowids, millisecond times) as JS numbers: rowids stay below 2^53 and times are
 * milliseconds, so nothing is lost, and rows look as they do from SQLite.
 */
const int8AsNumber = { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) };

/**
 * The writer's connection: one session, so one transaction at a time (the thread serialises
 * flushes). `onClose` runs when the session ends (the client reconnects on the next query).
 */
export function connectWriter(url: string, onClose: () => void = () => {}): Sql {
  return postgres(url, {
    max: 1,
    onclose: onClose,
    types: { int8: int8AsNumber },
    // CREATE … IF NOT EXISTS and the like report notices; they are not problems.
    onnotice: () => {},
    // Text mode is the client's default and measured faster than binary here (issue 16).
    prepare: true,
    // The WAL position a flush reports (read-your-writes on replicas) is only a durable commit's
    // when COMMIT waited for its WAL flush: a database or role default of `off` must not apply.
    // With synchronous_standby_names set, `on` also waits for the standbys' flush (zero-loss
    // failover); remote_apply is not needed, as recalls compare the replicas' replay position.
    connection: { application_name: 'memory-runtime writer', synchronous_commit: 'on' },
  });
}
