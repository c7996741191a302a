// What the miss-analysis tools (locomo-misses.ts, locomo-multihop.ts) share: the command line
// (`<cache> [setting]`: the folder locomo-tune.ts wrote its stores to, and weights as
// name=value,…), the LoCoMo conversations, the embedder, and each conversation's cached store
// opened read-only with its read port and the dialogue id of each stored turn.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config.js';
import { openDatabase, type Db } from '../../src/shared/db.js';
import { createEmbedder, embedderIdentity } from '../../src/workers/embedding/index.js';
import type { SignalName } from '../../src/workers/recall/engine.js';
import type { Embedder } from '../../src/workers/embedding/embedder.js';
import { SqliteReadPort } from '../../src/workers/sqlite/read-port.js';
import { loadLocomo, type Conversation } from './locomo-data.js';

export interface CachedStores {
  weights: Partial<Record<SignalName, number>>;
  reach: number | undefined;
  conversations: Conversation[];
  embedder: Embedder;
  open(conversation: Conversation): { db: Db; diaOf: Map<string, string>; port: SqliteReadPort };
}

export async function cachedStores(): Promise<CachedStores> {
  const cache = process.argv[2];
  if (!cache) throw new Error('usage: node <tool>.js <locomo-tune cache folder> [name=value,…]');
  const setting = process.argv[3] ?? '';
  const { reach, ...weights } = Object.fromEntries(setting.split(',').filter(Boolean).map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])])) as Partial<Record<SignalName | 'reach', number>>;
  const conversations = loadLocomo();
  if (!conversations) throw new Error('LoCoMo is not on this machine (BENCH_LOCOMO_DIR)');
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', SERVICE_PATH: join(cache, 'unused.db') });
  const embedder = await createEmbedder(config);
  const minSimilarity = embedderIdentity(config).minSimilarity;
  /** A conversation's cached store: read-only, its read port, and its turns' dialogue ids by memory id. */
  const open = (conversation: Conversation) => {
    const diaOf = new Map(JSON.parse(readFileSync(join(cache, `${conversation.id}.json`), 'utf8')) as [string, string][]);
    const db = openDatabase(join(cache, `${conversation.id}.db`), { readonly: true });
    const namespaceId = (db.prepare('SELECT id FROM namespaces WHERE name = ?').get(config.namespace) as { id: number }).id;
    const port = new SqliteReadPort(db, namespaceId, config.namespace, { minSimilarity });
    return { db, diaOf, port };
  };
  return { weights, reach, conversations, embedder, open };
}
