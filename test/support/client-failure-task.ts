// The client failures of client-failure-thread.ts as Piscina tasks, the way the read pool runs
// reads (test/postgres-client-failures.test.ts): each task breaks a connection of the thread's
// replaceable client and reports what its statement got, how often the guard caught the client's
// TypeError and the thread's id — the same id on every task proves the thread survived them.
import { threadId } from 'node:worker_threads';
import { connectReader } from '../../src/workers/postgres/client.js';
import { ReplaceableSql } from '../../src/shared/replaceable-sql.js';
import { nullSocketWritesCaught } from '../../src/shared/postgres-client-guard.js';

let client: ReplaceableSql<ReturnType<typeof connectReader>> | null = null;
let killer: ReturnType<typeof connectReader> | null = null;

const codeOf = (error: unknown) => (error as { code?: string }).code ?? String(error);

export default async function breakConnection({ url, scenario }: { url: string; scenario: 'reserved' | 'large' | 'transaction' | 'close' }) {
  if (scenario === 'close') {
    await killer?.end();
    await client?.end({ timeout: 1 });
    return null;
  }
  client ??= new ReplaceableSql((onClose) => connectReader(url, { max: 2, onClose }));
  killer ??= connectReader(url, { max: 1 });
  const { sql } = client;
  const current = client;
  const endBackend = async (pid: number) => {
    await killer!`SELECT pg_terminate_backend(${pid})`;
    while (!current.lostConnection) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  let failed: string;
  if (scenario === 'transaction') {
    failed = await sql.begin(async (tx) => {
      const [{ pid }] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await endBackend(pid!);
      await tx`SELECT 1`;
    }).then(() => 'committed', codeOf);
  } else {
    const connection = await sql.reserve();
    const [{ pid }] = await connection<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    await endBackend(pid!);
    const text = scenario === 'large' ? 'x'.repeat(2_048) : 'x';
    failed = await connection`SELECT ${text}::text AS t`.then(() => 'answered', codeOf);
  }
  // An immediate the client scheduled runs (and is caught) before the thread reports.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const [{ one }] = await sql<{ one: number }[]>`SELECT 1 AS one`;
  return { failed, caught: nullSocketWritesCaught(), afterwards: one, threadId };
}
