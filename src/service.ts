// Wires the parts together: writer thread → read pool → operations → HTTP server.
// Shutdown runs in the reverse order: stop listening, drain, close pool, close writer.
import { readFileSync } from 'node:fs';
import type { Config } from './shared/config.js';
import { createLogger, type Logger } from './shared/logger.js';
import { WriterClient } from './writer/client.js';
import { ReadPool } from './workers/pool.js';
import { MemoryOperations } from './http/operations.js';
import { buildRoutes } from './http/routes.js';
import { HttpServer } from './http/server.js';
import { assertNativeUws } from './http/native-check.js';
import { EmbeddingBackfill } from './workers/backfill.js';
import { Reinforcer } from './writer/reinforcement.js';
import { createMcpMount } from './http/mcp/handler.js';
import { Consolidator } from './workers/consolidator.js';

const PACKAGE: { name: string; version: string } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);
export const VERSION: string = PACKAGE.version;
/** The package name; MCP clients see it as the server name. */
export const NAME: string = PACKAGE.name;

export interface RunningService {
  readonly port: number;
  readonly config: Config;
  readonly operations: MemoryOperations;
  readonly writer: WriterClient;
  readonly backfill: EmbeddingBackfill;
  readonly consolidator: Consolidator;
  close(): Promise<void>;
}

export async function startService(config: Config, log: Logger = createLogger()): Promise<RunningService> {
  assertNativeUws();
  const writer = await WriterClient.start(config);
  const pool = new ReadPool(config, writer.namespaceId, log);
  const backfill = new EmbeddingBackfill(pool, writer, log);
  const reinforcer = new Reinforcer(writer, log);
  const consolidator = new Consolidator(pool, writer, backfill, log, config.consolidateIntervalMs);
  const operations = new MemoryOperations(config, writer, pool, backfill, reinforcer, consolidator);
  const mcp = createMcpMount({ config, ops: operations, log, name: NAME, version: VERSION });
  const server = new HttpServer(config, operations, buildRoutes(VERSION), log, [mcp]);
  let port: number;
  try {
    port = await server.listen();
  } catch (error) {
    await pool.close();
    await writer.close();
    throw error;
  }
  // Memories stored while the service was down (or before an embedder change) get vectors now.
  backfill.poke();
  consolidator.start();
  log.info({ port, host: config.host, db: config.dbPath, namespace: config.namespace, auth: config.apiKeys.length > 0 }, 'listening');

  let closing: Promise<void> | null = null;
  return {
    port,
    config,
    operations,
    writer,
    backfill,
    consolidator,
    close() {
      closing ??= (async () => {
        await server.close(config.shutdownGraceMs);
        // A run in progress needs the pool and the writer: let it finish first.
        await consolidator.stop();
        backfill.close();
        await reinforcer.flush();
        await pool.close();
        await writer.close();
        log.info('stopped');
      })();
      return closing;
    },
  };
}
