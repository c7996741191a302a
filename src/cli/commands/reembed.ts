// `reembed`: give every memory a vector from the configured embedder (SERVICE_EMBEDDER), with
// a progress bar. Run it after changing embedder, instead of starting the service with
// SERVICE_REEMBED=true, to do the work up front and offline. Vectors are written through the
// writer's own attachVectors, so the CLI stores them exactly as the service would.
import { RESET_VECTOR_INDEX_SQL, UNASSIGNED_CELL } from '../../shared/sql-schema.js';
import { sqliteConfigFrom, type Command } from '../terminal/args.js';
import { openForWriting } from '../storage/offline-db.js';
import { progressBar } from '../terminal/progress.js';
import { prepareVectorTable } from '../../writer/sqlite/vector-table.js';
import { SqliteCommands } from '../../writer/sqlite/adapter.js';
import { createEmbedder, embedderIdentity } from '../../workers/embedding/index.js';
import { EntityMatcher } from '../../workers/sqlite/entity-matcher.js';
import { embeddingInput } from '../../workers/embedding/embedder.js';

const BATCH = 64;

export const reembedCommand: Command = {
  name: 'reembed',
  summary: 'compute vectors with the configured embedder (after an embedder change)',
  help: `Usage: memory-runtime reembed [--all] [--quiet]

Computes the vector of every memory that lacks one for the embedder configured by
SERVICE_EMBEDDER (and SERVICE_EMBEDDING_DIMENSIONS, SERVICE_EMBEDDINGS_*). When the
database was embedded with another embedder, its vectors are dropped first and every
memory is re-embedded. Stop the service first: this writes to the database.

Options:
  --all      re-embed every memory even if the embedder did not change
  --quiet    no progress bar`,
  options: { all: { type: 'boolean' }, quiet: { type: 'boolean' } },
  positionals: { min: 0, max: 0 },
  async run({ values }) {
    const config = sqliteConfigFrom('reembed', values);
    const target = openForWriting(config, 'reembed', { create: false });
    try {
      const { db } = target;
      const identity = embedderIdentity(config);
      prepareVectorTable(db, identity, true);
      if (values.all) {
        db.exec('DELETE FROM memory_vectors');
        db.exec('UPDATE memories SET embedded = 0');
        db.exec(RESET_VECTOR_INDEX_SQL);
      }
      const pending = db.prepare<[], { rowid: number; content: string; namespace_id: number }>(
        `SELECT rowid, content, namespace_id FROM memories WHERE embedded = 0 ORDER BY rowid LIMIT ${BATCH}`);
      const total = (db.prepare('SELECT count(*) AS n FROM memories WHERE embedded = 0').get() as { n: number }).n;
      const embedder = await createEmbedder(config);
      const store = new SqliteCommands(db, config, target.namespaceId(config.namespace));
      const matchers = new Map<number, EntityMatcher>();
      const matcher = (ns: number) => matchers.get(ns) ?? matchers.set(ns, new EntityMatcher(db, ns)).get(ns)!;
      const progress = progressBar('reembed', total, Boolean(values.quiet));
      let done = 0;
      for (let rows = pending.all(); rows.length > 0; rows = pending.all()) {
        const vectors = await embedder.embed(rows.map((r) => embeddingInput(r.content)));
        db.transaction(() => store.run({
          type: 'attachVectors',
          // Unassigned: the service's vector indexer places them in IVF cells when it starts.
          items: rows.map((r, i) => ({
            rowid: r.rowid, vector: vectors[i], cell: UNASSIGNED_CELL, mentionedEntityIds: matcher(r.namespace_id).find(r.content),
          })),
        }))();
        done += rows.length;
        progress.tick(rows.length);
      }
      progress.stop();
      process.stderr.write(`reembedded ${done} memories with ${embedder.id} (${embedder.dimensions}-d)\n`);
    } finally {
      target.close();
    }
  },
};
