// A thread that meets the `postgres` client's failures the way the service's threads do
// (test/postgres-client-failures.test.ts): on a replaceable client (shared/replaceable-sql.ts),
// a server-side end of the backend between two statements of a reserved connection or of a
// transaction. It posts what it saw — and that it is still running — to its parent.
// `unrelated`: after the guard is installed, an unrelated error is thrown from a timer (it must
// end the thread as it would without the guard).
import { parentPort, workerData } from 'node:worker_threads';
import { connectReader } from '../../src/workers/postgres/client.js';
import { ReplaceableSql } from '../../src/shared/replaceable-sql.js';
import { nullSocketWritesCaught } from '../../src/shared/postgres-client-guard.js';

// `node --test dist/test/` also runs every module under test/ as a file of tests: run that way,
// without a parent, there is no scenario to play.
if (!parentPort) process.exit(0);

const { url, scenario } = workerData as { url: string; scenario: 'reserved' | 'large' | 'transaction' | 'unrelated' };
const client = new ReplaceableSql((onClose) => connectReader(url, { max: 2, onClose }));
const { sql } = client;
const killer = connectReader(url, { max: 1 });

/** Ends the backend behind `pid` from another session and waits until the client has seen it close. */
async function endBackend(pid: number): Promise<void> {
  await killer`SELECT pg_terminate_backend(${pid})`;
  while (!client.lostConnection) await new Promise((resolve) => setTimeout(resolve, 5));
}

const codeOf = (error: unknown) => (error as { code?: string }).code ?? String(error);

async function reserved() {
  const connection = await sql.reserve();
  const [{ pid }] = await connection<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  await endBackend(pid!);
  // The next statement on the reserved connection is the one the client writes to a null socket.
  return connection`SELECT 1`.then(() => 'answered', codeOf);
}

/**
 * A statement of 1 KB or more is written at once, not from an immediate: on the closed socket the
 * client's TypeError then reaches the caller as the query's rejection (a recall's own error).
 */
async function large() {
  const connection = await sql.reserve();
  const [{ pid }] = await connection<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  await endBackend(pid!);
  const text = 'x'.repeat(2_048);
  return connection`SELECT ${text}::text AS big`.then(() => 'answered', codeOf);
}

async function transaction() {
  return sql.begin(async (tx) => {
    const [{ pid }] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    await endBackend(pid!);
    await tx`SELECT 1`;
  }).then(() => 'committed', codeOf);
}

if (scenario === 'unrelated') {
  setTimeout(() => { throw new TypeError('unrelated failure'); }, 10);
} else {
  const failed = scenario === 'reserved' ? await reserved() : scenario === 'large' ? await large() : await transaction();
  // Give an immediate scheduled by the client the chance to run (and to be caught) before looking.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const [{ one }] = await sql<{ one: number }[]>`SELECT 1 AS one`;
  parentPort!.postMessage({ failed, caught: nullSocketWritesCaught(), generation: client.generation, afterwards: one });
  await killer.end();
  await sql.end({ timeout: 1 });
}
