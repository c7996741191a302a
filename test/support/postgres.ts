// Private PostgreSQL clusters for tests (issue 16): Debian's PostgreSQL 15 binaries, a data
// directory in a temp folder, a loopback port, and optionally a streaming replica made with
// `pg_basebackup -R`, as an operator would. Nothing of the machine's own clusters is touched.
// PostgreSQL refuses to run as root, so as root each command runs as the `postgres` system user
// that Debian's package creates.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const SUPERUSER = 'memrt';

export interface PgCluster {
  /** The temp folder holding the data directory and the server's socket. */
  readonly dir: string;
  readonly port: number;
  readonly url: string;
  /** Runs SQL through psql (in `database`, default postgres) and returns its unaligned output (rows by line, columns by '|'). */
  sql(statement: string, database?: string): Promise<string>;
  /** Stops the server at once (`pg_ctl stop -m immediate`: a crash, as far as clients can tell), keeping its data. */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port. */
  restart(): Promise<void>;
  /** kill -9 of the postmaster alone, as a machine's failure looks (its backends then exit on their own). */
  crash(): Promise<void>;
  /** Promotes a standby to primary (pg_ctl promote, waiting until it accepts writes). */
  promote(): Promise<void>;
  /** Makes `role` log in over TCP with its password (scram-sha-256) instead of trust. */
  requirePassword(role: string): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = userInfo().uid === 0;

/**
 * Why a cluster cannot start here, or null when it can (tests skip with this message). With
 * POSTGRES_REQUIRED=1 (set by .ci/run, which installs PostgreSQL) a missing cluster throws instead,
 * so a broken install fails CI rather than quietly skipping every PostgreSQL test.
 */
export function postgresUnavailable(): string | null {
  const reason = whyPostgresCannotStart();
  if (reason && process.env.POSTGRES_REQUIRED === '1') throw new Error(`POSTGRES_REQUIRED=1 but ${reason}`);
  return reason;
}

function whyPostgresCannotStart(): string | null {
  if (!existsSync(join(PG_BIN, 'postgres'))) return `PostgreSQL binaries not found in ${PG_BIN} (apt-get install postgresql)`;
  if (asRoot && !postgresUser()) return 'running as root and there is no postgres system user to run PostgreSQL as (apt-get install postgresql creates it)';
  return null;
}

/** Runs a PostgreSQL binary, as the postgres user when this process is root; inside `netns` when given (root only). */
function pgCommand(binary: string, args: string[], netns?: string): Promise<{ stdout: string }> {
  return asPostgres(join(PG_BIN, binary), args, netns);
}

/** Runs `command` as the user that owns the clusters' files (postgres when this process is root). */
function asPostgres(command: string, args: string[], netns?: string): Promise<{ stdout: string }> {
  const inNetns = netns ? ['ip', 'netns', 'exec', netns] : [];
  if (asRoot) {
    const [first, ...rest] = [...inNetns, 'runuser', '-u', 'postgres', '--', command, ...args];
    return run(first!, rest);
  }
  if (netns) throw new Error('a network namespace needs root');
  return run(command, args);
}

/** Where a primary listens: by default 127.0.0.1 of this network namespace. */
export interface PrimaryOptions {
  /** A network namespace (`ip netns add`) to run the server in; psql then reaches it by its socket. */
  netns?: string;
  /** listen_addresses (an address of that namespace). */
  listenAddress?: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function privateDir(): string {
  const dir = mkdtempSync('/tmp/memrt-pg-');
  if (asRoot) {
    const user = postgresUser();
    if (!user) throw new Error('no postgres system user');
    chownSync(dir, user.uid, user.gid);
  }
  return dir;
}

/** The `postgres` system user's ids, from /etc/passwd. */
function postgresUser(): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

async function startServer(dataDir: string, socketDir: string, port: number, where: PrimaryOptions = {}): Promise<void> {
  const options = [
    `-p ${port}`, `-k ${socketDir}`, `-c listen_addresses=${where.listenAddress ?? '127.0.0.1'}`,
    '-c wal_level=replica', '-c max_wal_senders=5', '-c hot_standby=on',
  ].join(' ');
  await pgCommand('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(dataDir, 'server.log'), '-w', '-t', '60', 'start'], where.netns);
}

function cluster(dir: string, dataDir: string, port: number, where: PrimaryOptions = {}): PgCluster {
  // From another network namespace the server's TCP address is out of reach; its socket is not.
  const psqlHost = where.netns ? dir : '127.0.0.1';
  return {
    dir,
    port,
    url: `postgres://${SUPERUSER}@${where.listenAddress ?? '127.0.0.1'}:${port}/postgres`,
    async sql(statement, database = 'postgres') {
      const { stdout } = await run('psql', ['-h', psqlHost, '-p', String(port), '-U', SUPERUSER, '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atc', statement]);
      return stdout.trim();
    },
    async halt() {
      await pgCommand('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
    },
    async restart() {
      await startServer(dataDir, dir, port, where);
    },
    async crash() {
      const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      // Gone once signal 0 finds no such process.
      for (;;) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    async promote() {
      await pgCommand('pg_ctl', ['-D', dataDir, '-w', '-t', '60', 'promote']);
    },
    async requirePassword(role) {
      const hba = join(dataDir, 'pg_hba.conf');
      // First match wins: this line goes before initdb's trust lines.
      writeFileSync(hba, `host all ${role} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
      await this.sql('SELECT pg_reload_conf()');
    },
    async stop() {
      await pgCommand('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** initdb's options for every primary (trust auth on loopback only): part of the template's key. */
const INITDB_OPTIONS = ['-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--no-instructions'];

/**
 * A data directory as initdb leaves it, made once per machine for these binaries and copied for
 * each new primary: initdb takes seconds, a copy of its 40 MB a tenth of one, and a suite starts
 * dozens of primaries. Never started itself, so every copy is a never-started cluster, as initdb's
 * own output is (all copies share one system identifier: no test streams across clusters it did
 * not make from one another). Kept across runs in a folder only the clusters' user can write, so
 * no other local user can plant a template; written with fsync (unlike the throwaway clusters'
 * --no-sync), so a crash cannot leave a marked but torn template. Without such a folder each
 * primary runs initdb itself.
 */
let template: Promise<string | null> | undefined;
function templateDataDir(): Promise<string | null> {
  template ??= (async () => {
    const owner = asRoot ? postgresUser()! : { uid: userInfo().uid, gid: userInfo().gid };
    const parent = `/tmp/memrt-pg-templates-${owner.uid}`; // beside privateDir's folders: the rename stays on one file system
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    const held = lstatSync(parent);
    if (asRoot && held.uid === 0 && (held.mode & 0o777) === 0o700) chownSync(parent, owner.uid, owner.gid);
    const checked = lstatSync(parent);
    if (!checked.isDirectory() || checked.uid !== owner.uid || (checked.mode & 0o077) !== 0) return null;
    const postgres = statSync(join(PG_BIN, 'postgres'));
    const locale = ['LANG', 'LC_ALL', 'LC_CTYPE', 'LC_COLLATE'].map((name) => process.env[name] ?? '').join(',');
    const key = createHash('sha256').update(`${PG_BIN}|${postgres.size}|${postgres.mtimeMs}|${INITDB_OPTIONS.join(' ')}|${locale}`).digest('hex').slice(0, 16);
    const final = join(parent, key);
    // The marker is written last, inside the folder before it takes its final name: a folder
    // under that name with its marker is whole.
    if (existsSync(join(final, 'complete'))) return join(final, 'data');
    // A folder under that name without its marker (a temp cleaner took the marker, an
    // interrupted removal) is set aside, or the rename below would fail on it for ever.
    if (existsSync(final)) {
      const aside = `${final}.stale-${process.pid}-${Date.now()}`;
      try { renameSync(final, aside); rmSync(aside, { recursive: true, force: true }); } catch { /* another process did */ }
    }
    const building = privateDir();
    try {
      await pgCommand('initdb', ['-D', join(building, 'data'), ...INITDB_OPTIONS]);
      writeFileSync(join(building, 'complete'), '');
      renameSync(building, final);
    } catch (error) {
      // Another test process made it first (rename refuses a non-empty target): use theirs;
      // anything else (initdb failed) is thrown, leaving no half-made folder behind.
      rmSync(building, { recursive: true, force: true });
      if (!existsSync(join(final, 'complete'))) throw error;
    }
    return join(final, 'data');
  })();
  // A failure is not kept: the next primary tries again (and reports the error itself).
  template.catch(() => { template = undefined; });
  return template;
}

/** A new primary: a copy of initdb's output (trust auth on loopback only), started on a free port. */
export async function startPrimary(where: PrimaryOptions = {}): Promise<PgCluster> {
  const dir = privateDir();
  const dataDir = join(dir, 'data');
  const copyOf = await templateDataDir();
  if (copyOf) await asPostgres('cp', ['-a', copyOf, dataDir]);
  else await pgCommand('initdb', ['-D', dataDir, ...INITDB_OPTIONS, '--no-sync']);
  // initdb trusts loopback only; a server on another address trusts its own subnet too.
  if (where.listenAddress) appendFileSync(join(dataDir, 'pg_hba.conf'), 'host all all samenet trust\n');
  const port = await freePort();
  await startServer(dataDir, dir, port, where);
  return cluster(dir, dataDir, port, where);
}

/**
 * A streaming replica of `primary`, as `pg_basebackup -R` makes one (standby.signal + primary_conninfo).
 * `name`: its application_name on the primary (what synchronous_standby_names lists).
 */
export async function startReplica(primary: PgCluster, { name }: { name?: string } = {}): Promise<PgCluster> {
  const dir = privateDir();
  const dataDir = join(dir, 'data');
  await pgCommand('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', SUPERUSER, '-D', dataDir, '-R', '-X', 'stream', '--no-sync', '--checkpoint=fast']);
  if (name) {
    // A later line wins: the same connection, under the standby's name.
    appendFileSync(join(dataDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=${SUPERUSER} application_name=${name}'\n`);
  }
  const port = await freePort();
  await startServer(dataDir, dir, port);
  return cluster(dir, dataDir, port);
}

/** Waits until `replica` has replayed everything `primary` has flushed so far (20 s at most). */
export async function replicaCaughtUp(primary: PgCluster, replica: PgCluster, ms = 20_000): Promise<void> {
  const flushed = await primary.sql('SELECT pg_current_wal_flush_lsn()');
  const deadline = performance.now() + ms;
  while ((await replica.sql(`SELECT pg_last_wal_replay_lsn() >= '${flushed}'::pg_lsn`)) !== 't') {
    if (performance.now() > deadline) throw new Error(`timed out waiting for the replica to replay ${flushed}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
