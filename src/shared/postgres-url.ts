// PostgreSQL URLs as the `postgres` client reads them, checked before the client sees one. The
// client parses leniently and fails late (a NaN port, a host of '' or a bad escape surface at the
// first query, as a connection error) or quietly does something else: a second host without a
// port gets the first host's, and an unknown query parameter (`password=`, `host=`) is sent to
// the server as a setting. So the URL is parsed here once, what the client cannot use is refused
// with the problem named, and the client is given the same target written out canonically
// (every host with its port, user and password percent-encoded, `password=` moved into the
// userinfo), which it parses back exactly. `redacted` is the form for logs and messages.

/** The target a URL names, and the URL written so the client reads that target back. */
export interface PostgresTarget {
  /** The canonical URL for the client. */
  readonly url: string;
  /** The canonical URL with its password (if any) replaced by *** (for logs, output, errors). */
  readonly redacted: string;
  readonly hosts: readonly { readonly host: string; readonly port: number }[];
  /** Empty: the client's default (the user name). */
  readonly database: string;
  /** Empty: the client's default (PGUSER, else the OS user). */
  readonly user: string;
  readonly password: string;
  /** Query parameters (client options such as sslmode and target_session_attrs, and server settings). */
  readonly params: Readonly<Record<string, string>>;
}

/** What is wrong with a URL, in words that never include its password. */
export class PostgresUrlError extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'PostgresUrlError';
  }
}

export const DEFAULT_PORT = 5432;
export const REDACTED = '***';

/** sslmode values the client understands (verify-ca verifies the host name too, as verify-full). */
const SSL_MODES = new Set(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']);
const SESSION_ATTRS = new Set(['read-write', 'read-only', 'primary', 'standby', 'prefer-standby']);
/** Client options the client reads as whole numbers (a word there becomes NaN). */
const INTEGER_OPTIONS = new Set(['connect_timeout', 'idle_timeout', 'max_lifetime', 'max_pipeline', 'keep_alive', 'max']);
/** libpq keywords the client does not understand: it would send them to the server as settings. */
const UNSUPPORTED = new Map([
  ['host', 'name the hosts in the URL (host1:port1,host2:port2)'],
  ['hostaddr', 'name the hosts in the URL (host1:port1,host2:port2)'],
  ['port', 'give each host its port in the URL (host:port)'],
  ['dbname', 'give the database as the URL\'s path (/dbname)'],
  ['user', 'give the user in the URL (postgres://user:password@host)'],
  ['passfile', 'give the password in the URL'],
  ['service', 'the client reads no pg_service.conf'],
  ['sslcert', 'the client takes no certificate files from a URL'],
  ['sslkey', 'the client takes no certificate files from a URL'],
  ['sslcrl', 'the client takes no certificate files from a URL'],
  ['sslpassword', 'the client takes no certificate files from a URL'],
  ['gssencmode', 'the client has no GSSAPI encryption'],
  ['krbsrvname', 'the client has no Kerberos'],
  ['requiressl', 'use sslmode=require'],
  ['load_balance_hosts', 'the client tries the hosts in order'],
]);

/** A host name, an IPv4 address: what the client can connect to from a URL. */
const HOST_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Parses a postgres:// or postgresql:// URL; throws PostgresUrlError naming the problem.
 * Accepted: several hosts (`h1:5432,h2:5433`), a percent-encoded user and password (either may
 * hold ':' '@' '/' encoded; with a raw '@' in the password the userinfo ends at the last '@', as
 * WHATWG URL parsing reads it),
 * and query parameters (`password=` is taken as the password).
 */
export function parsePostgresUrl(value: string): PostgresTarget {
  const match = /^(postgres(?:ql)?):\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/is.exec(value.trim());
  if (!match) throw new PostgresUrlError('must be a postgres:// or postgresql:// URL');
  const [, , authority, path = '', query = '', fragment] = match;
  // A raw '/', '?' or '#' in a password ends the authority early (as in libpq): the rest would be
  // read as host and port, and echoing those in a message would show part of the password.
  if (!authority.includes('@') && `${path}${query}${fragment ?? ''}`.includes('@')) {
    throw new PostgresUrlError("cannot be split into user, password and hosts: percent-encode '/', '?', '#' and '@' in the user or password (%2F %3F %23 %40)");
  }
  if (fragment !== undefined) throw new PostgresUrlError('has a #fragment, which a PostgreSQL URL cannot use (percent-encode # in a password as %23)');
  if (/\s/.test(value.trim())) throw new PostgresUrlError('contains white space (percent-encode it, e.g. %20)');
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : null;
  const colon = userinfo === null ? -1 : userinfo.indexOf(':');
  let user = userinfo === null ? '' : decode(colon >= 0 ? userinfo.slice(0, colon) : userinfo, 'the user');
  let password = colon >= 0 ? decode(userinfo!.slice(colon + 1), 'the password') : '';
  const hosts = parseHosts(authority.slice(at + 1));
  const database = parseDatabase(path);
  const params: Record<string, string> = {};
  for (const [key, raw] of new URLSearchParams(query.slice(1))) {
    if (key === 'password') {
      password = raw;
      continue;
    }
    if (key === 'user' && user === '') {
      user = raw;
      continue;
    }
    const unsupported = UNSUPPORTED.get(key);
    if (unsupported) throw new PostgresUrlError(`query parameter ${key} is not supported by the postgres client: ${unsupported}`);
    params[key] = checkParam(key, raw);
  }
  const target = { hosts, database, user, password, params };
  return Object.freeze({ ...target, url: formatUrl(target, password), redacted: formatUrl(target, password === '' ? '' : REDACTED) });
}

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new PostgresUrlError(`${what} is not valid percent-encoding (write % itself as %25)`);
  }
}

function parseHosts(list: string): { host: string; port: number }[] {
  if (list === '') throw new PostgresUrlError('names no host (postgres://user:password@host:port/database)');
  return list.split(',').map((entry) => {
    if (entry.startsWith('[')) throw new PostgresUrlError(`host ${entry}: the postgres client cannot connect to an IPv6 address given in a URL; use a host name`);
    const colon = entry.indexOf(':');
    const host = colon >= 0 ? entry.slice(0, colon) : entry;
    const portText = colon >= 0 ? entry.slice(colon + 1) : '';
    if (host === '') throw new PostgresUrlError(`has an empty host in "${list}"`);
    if (!HOST_NAME.test(host)) {
      throw new PostgresUrlError(`host "${host}" is not a host name or IPv4 address${host.includes('%') ? ' (the postgres client cannot reach a Unix socket from a URL)' : ''}`);
    }
    if (colon < 0) return { host, port: DEFAULT_PORT };
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      throw new PostgresUrlError(`host ${host} has port "${portText}", not a number from 1 to 65535`);
    }
    return { host, port: Number(portText) };
  });
}

/** The client takes the path as the database name without decoding it: only names needing no escape pass. */
function parseDatabase(path: string): string {
  const name = path.slice(1);
  if (name.includes('/')) throw new PostgresUrlError(`path "${path}" is not one database name`);
  if (name !== '' && !/^[A-Za-z0-9_.$-]+$/.test(name)) {
    throw new PostgresUrlError(`database name "${name}" needs percent-encoding, which the postgres client does not decode; use a name of letters, digits, _ . $ -`);
  }
  return name;
}

function checkParam(key: string, value: string): string {
  if (key === 'sslmode' && !SSL_MODES.has(value)) throw new PostgresUrlError(`sslmode=${value} is not one of ${[...SSL_MODES].join(', ')}`);
  if (key === 'target_session_attrs' && !SESSION_ATTRS.has(value)) {
    throw new PostgresUrlError(`target_session_attrs=${value} is not one of ${[...SESSION_ATTRS].join(', ')}`);
  }
  if (key === 'sslrootcert' && value !== 'system') throw new PostgresUrlError('sslrootcert: the postgres client only takes sslrootcert=system from a URL');
  if (INTEGER_OPTIONS.has(key) && !/^\d+$/.test(value)) throw new PostgresUrlError(`${key}=${value} is not a whole number`);
  return value;
}

function formatUrl(target: Omit<PostgresTarget, 'url' | 'redacted'>, password: string): string {
  const credentials = target.user === '' && password === '' ? ''
    : `${encodeURIComponent(target.user)}${password === '' ? '' : `:${password === REDACTED ? REDACTED : encodeURIComponent(password)}`}@`;
  const hosts = target.hosts.map(({ host, port }) => `${host}:${port}`).join(',');
  const query = new URLSearchParams(target.params).toString();
  return `postgres://${credentials}${hosts}/${target.database}${query ? `?${query}` : ''}`;
}

/**
 * `text` with the password of every postgres URL in it replaced by ***: the userinfo's (even
 * with a raw '@', '/' or '?' in it) and a `password=` parameter's. For text that may hold a URL
 * that did not parse.
 */
export function redactPostgresUrls(text: string): string {
  return text.replace(/postgres(?:ql)?:\/\/[^\s"'<>]*/gi, (url) => {
    const start = url.indexOf('://') + 3;
    // The userinfo ends at the last '@' followed by nothing but a host list up to the path or query.
    let at = -1;
    for (const found of url.matchAll(/@[A-Za-z0-9.,:_\-[\]%]*(?=[/?#]|$)/g)) at = found.index!;
    const colon = url.indexOf(':', start);
    const userinfo = at > start && colon >= 0 && colon < at ? `${url.slice(0, colon + 1)}${REDACTED}${url.slice(at)}` : url;
    return userinfo.replace(/([?&]password=)[^&#\s]*/gi, `$1${REDACTED}`);
  });
}

/** Default bound on getting a replica connection: a black-holed replica costs a recall this much at most. */
export const REPLICA_CONNECT_MS = 2_000;

/**
 * How long to wait for a connection to the read URL's servers, at start-up and for each recall:
 * the URL's connect_timeout when it sets one, else REPLICA_CONNECT_MS.
 */
export function replicaConnectMs(readUrl: string): number {
  const seconds = connectTimeoutOf(readUrl);
  return seconds === null ? REPLICA_CONNECT_MS : seconds * 1000;
}

/** The URL's connect_timeout parameter in seconds, or null when it sets none. */
function connectTimeoutOf(url: string): number | null {
  const query = url.indexOf('?');
  const value = query < 0 ? null : new URLSearchParams(url.slice(query + 1)).get('connect_timeout');
  return value && /^\d+$/.test(value) && Number(value) > 0 ? Number(value) : null;
}

/**
 * The canonical `url` (as parsePostgresUrl writes it) with its host list started at host
 * `start` (modulo their number), the others following in order: a new client then tries that
 * host first. The client starts every new client at the first listed host; libpq-like host
 * selection moves on from a host that answered but was the wrong kind (a standby).
 */
export function startingAtHost(url: string, start: number): string {
  const match = /^(postgres:\/\/(?:[^@/]*@)?)([^/]*)(\/.*)$/s.exec(url);
  if (!match) return url;
  const hosts = match[2]!.split(',');
  const first = ((start % hosts.length) + hosts.length) % hosts.length;
  return `${match[1]}${[...hosts.slice(first), ...hosts.slice(0, first)].join(',')}${match[3]}`;
}
