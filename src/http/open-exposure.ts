// With SERVICE_API_KEYS unset every route is open (the spec's single-user mode). That is safe on a
// loopback address and a surprise anywhere else — the default HOST is 0.0.0.0, so a quick start on
// a server lets anyone who can reach the port read and delete every memory. The service still
// starts (the spec says auth is opt-in); it says so once, naming the variable that closes it.
import { isIP } from 'node:net';

/** 127.0.0.0/8, ::1 (also as an IPv4-mapped address or in brackets) and localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice('::ffff:'.length) : bare;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(bare) === 6 && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(bare);
}

/** The start-up warning, or null when auth is on or only this machine can connect. */
export function openExposureWarning(host: string, authEnabled: boolean): { msg: string; fields: Record<string, string> } | null {
  if (authEnabled || isLoopbackHost(host)) return null;
  return {
    msg: 'authentication is off on a non-loopback address: anyone who can reach this port can read, change and delete every memory; set SERVICE_API_KEYS (or bind HOST=127.0.0.1)',
    fields: { host, variable: 'SERVICE_API_KEYS' },
  };
}
