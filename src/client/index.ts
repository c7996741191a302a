// The server package's `memory-runtime/client` entry and the CLI's client: the standalone client
// package (clients/typescript), compiled with the server so one build serves both.
export * from '../../clients/typescript/src/index.js';
