// `serve`: runs the service exactly as `npm start` does (minus the build step).
import type { Command } from '../terminal/args.js';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the HTTP + MCP service (same as npm start)',
  help: `Usage: memory-runtime serve

Starts the service in the foreground, configured from the environment (HOST, PORT,
SERVICE_PATH, SERVICE_NAMESPACE, SERVICE_API_KEYS, ... — see the README). JSON log lines go
to stdout; SIGTERM or SIGINT shut it down gracefully. --db and --namespace set SERVICE_PATH
and SERVICE_NAMESPACE.`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run({ values }) {
    if (typeof values.db === 'string') process.env.SERVICE_PATH = values.db;
    if (typeof values.namespace === 'string') process.env.SERVICE_NAMESPACE = values.namespace;
    // The entry point reads the environment, starts the service and installs signal handlers.
    await import('../../main.js');
  },
};
