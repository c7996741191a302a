// Process entry point: `node dist/src/main.js` (what `npm start` runs).
import { loadConfig, ConfigError } from './shared/config.js';
import { createLogger } from './shared/logger.js';
import { startService } from './service.js';
import { LockHeldError } from './shared/instance-lock.js';
import { UnreadableDatabaseError } from './shared/unreadable-database.js';
import { DatabaseUnreachableError } from './core/postgres-reachable.js';
import { redactPostgresUrls } from './shared/postgres-url.js';

const log = createLogger();

try {
  const service = await startService(loadConfig(), log, {
    // The writer thread died: stop taking requests, then exit non-zero for the supervisor.
    onFatal: () => {
      // exitCode first: should close() never settle, the process still ends non-zero once idle.
      process.exitCode = 70;
      const exit = () => process.exit(70);
      setTimeout(exit, 10_000).unref();
      service.close().then(exit, exit);
    },
  });
  const stop = (signal: string) => {
    log.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
} catch (error) {
  // Also one plain line on stderr: an operator starting the service by hand (or a supervisor's
  // journal) sees why it stopped without reading the JSON log.
  process.stderr.write(`memory-runtime: cannot start: ${redactPostgresUrls(error instanceof Error ? error.message : String(error))}\n`);
  if (error instanceof ConfigError) log.fatal(`invalid configuration: ${error.message}`);
  else if (error instanceof DatabaseUnreachableError) log.fatal({ variable: error.target.variable, db: error.target.label, reason: error.reason }, error.message);
  else if (error instanceof UnreadableDatabaseError) {
    log.fatal({ db: error.path, sqliteCode: error.sqliteCode, sqliteMessage: error.sqliteMessage }, error.message);
  } else if (error instanceof LockHeldError) log.fatal(`cannot start: the database is in use: ${error.message}`);
  else log.fatal({ err: error }, 'start-up failed');
  process.exit(1);
}
