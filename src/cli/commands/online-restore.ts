// `restore` while the service runs: the service holds the database's lock and its writer must
// stay the only writer, so the command asks the service to restore (POST
// /v1/snapshots/{id}/restore) instead of opening the file. The service is found at --url, else
// MEMORY_RUNTIME_URL, else the URL the service wrote into the lock's holder file when it began
// listening; the key is --api-key, else MEMORY_RUNTIME_API_KEY, else the first of SERVICE_API_KEYS.
import type { Config } from '../../shared/config.js';
import type { LockInfo } from '../../shared/instance-lock.js';
import type { RestoreResult } from '../../shared/schemas.js';
import { MemoryClient, MemoryServiceError } from '../../client/index.js';
import { CliError } from '../terminal/args.js';

export interface ServiceAddress {
  url: string | null;
  apiKey: string | undefined;
  /** The namespace to restore into (--namespace, else SERVICE_NAMESPACE): sent as Memory-Namespace. */
  namespace: string;
}

export function serviceAddress(config: Config, values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv, holder: LockInfo | null): ServiceAddress {
  const flag = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  return {
    url: flag('url') ?? env.MEMORY_RUNTIME_URL ?? holder?.url ?? null,
    apiKey: flag('api-key') ?? env.MEMORY_RUNTIME_API_KEY ?? config.apiKeys[0],
    namespace: config.namespace,
  };
}

/** `holder`: the service holding the SQLite file's lock (null on PostgreSQL, where none may hold it here). */
export async function restoreThroughService(address: ServiceAddress, holder: LockInfo | null, snapshotId: string): Promise<RestoreResult> {
  const held = holder ? `the database is in use by ${holder.owner} (pid ${holder.pid} on ${holder.host})` : 'the service keeps the snapshots';
  if (address.url === null) {
    throw new CliError(`${held}, and its address is unknown: pass --url or set MEMORY_RUNTIME_URL to restore through it`);
  }
  const client = new MemoryClient({ baseUrl: address.url, apiKey: address.apiKey, namespace: address.namespace, timeoutMs: 10 * 60_000 });
  try {
    return await client.restoreSnapshot({ snapshot_id: snapshotId });
  } catch (error) {
    if (error instanceof MemoryServiceError) {
      throw new CliError(`restore through the service at ${address.url} failed (HTTP ${error.status}${error.code ? ` ${error.code}` : ''}): ${error.errorText}`);
    }
    throw new CliError(`${held}, but the service cannot be reached at ${address.url} (${(error as Error).message}); ` +
      `pass --url or set MEMORY_RUNTIME_URL${holder ? ', or stop the service to restore offline' : ''}`);
  }
}
