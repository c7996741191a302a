// Loading an export (namespace-export.ts) into a database, line by line as it streams in.
// Everything happens in one transaction: a damaged or truncated file (row counts must match
// the header) rolls back completely. Rows already present (same id, same namespace) are kept
// as they are, so importing the same file twice changes nothing.
import type { Db } from '../../shared/db.js';
import { RowWriter, type RefResolver } from '../../writer/sqlite/row-writer.js';
import { VectorRows } from '../../writer/sqlite/vector-rows.js';
import { validators, type ExportHeaderT } from '../../shared/file-formats.js';

/** What a namespace copy counts, into the SQLite file (import) or PostgreSQL (migrate: postgres-copy.ts). */
export interface CopiedRows {
  namespace: string;
  created: { entities: number; episodes: number; memories: number };
  present: { entities: number; episodes: number; memories: number };
  vectors: number;
}

export interface ImportResult extends CopiedRows {
  vectorsSkipped: number;
}

/** Thrown with the 1-based line number of the offending line. */
export class ImportLineError extends Error {
  constructor(readonly line: number, reason: string) {
    super(`line ${line}: ${reason}`);
    this.name = 'ImportLineError';
  }
}

export interface ImportTarget {
  db: Db;
  namespaceId(name: string, createdAt?: number): number;
}

/** Call inside a transaction; `onRow` is told of every data row (for progress). */
export async function importNamespace(
  lines: AsyncIterable<string>,
  target: ImportTarget,
  options: { namespace?: string; onHeader?: (header: ExportHeaderT) => void; onRow?: () => void },
): Promise<ImportResult> {
  let lineNo = 0;
  let header: ExportHeaderT | null = null;
  let rows!: RowWriter;
  let vectors!: VectorRows;
  const entityIds = new Map<string, string>();
  const seen = { entities: 0, episodes: 0, memories: 0 };
  const result: ImportResult = {
    namespace: '', created: { entities: 0, episodes: 0, memories: 0 }, present: { entities: 0, episodes: 0, memories: 0 },
    vectors: 0, vectorsSkipped: 0,
  };
  const refs: RefResolver = {
    entity: (id) => entityIds.get(id) ?? (rows.isHere('entities', id) ? id : null),
    episode: (id) => (rows.isHere('episodes', id) ? id : null),
  };

  for await (const text of lines) {
    lineNo++;
    if (text.trim() === '') continue;
    try {
      const parsed = parseLine(text);
      if (header === null) {
        header = checked('not an export header', () => validators.header.parse(parsed));
        result.namespace = options.namespace ?? header.namespace;
        const namespaceId = target.namespaceId(result.namespace, header.namespace_created_at);
        rows = new RowWriter(target.db, namespaceId);
        vectors = new VectorRows(target.db, namespaceId);
        options.onHeader?.(header);
        continue;
      }
      const type = (parsed as { type?: unknown }).type;
      if (type === 'entity') {
        const { type: _t, ...entity } = checked('entity row', () => validators.entity.parse(parsed)) as Record<string, unknown>;
        const put = rows.putEntity(entity);
        entityIds.set(String(entity.id), put.id);
        count(result, 'entities', put.created);
        seen.entities++;
      } else if (type === 'episode') {
        const { type: _t, participants, ...episode } = checked('episode row', () => validators.episode.parse(parsed)) as Record<string, any>;
        count(result, 'episodes', rows.putEpisode(episode, participants, refs));
        seen.episodes++;
      } else if (type === 'memory') {
        const { type: _t, links, embedding, ...memory } = checked('memory row', () => validators.memory.parse(parsed)) as Record<string, any>;
        const rowid = rows.putMemory(memory, links, refs);
        count(result, 'memories', rowid !== null);
        if (rowid !== null && embedding) vectors.write(rowid, embedding, header.embedder);
        seen.memories++;
      } else {
        throw new Error(`unknown row type ${JSON.stringify(type)}`);
      }
      options.onRow?.();
    } catch (error) {
      throw new ImportLineError(lineNo, (error as Error).message);
    }
  }
  if (header === null) throw new ImportLineError(Math.max(lineNo, 1), 'no export header: the file is empty or not an export');
  for (const table of ['entities', 'episodes', 'memories'] as const) {
    if (seen[table] !== header.counts[table]) {
      throw new ImportLineError(lineNo, `the file is incomplete: ${seen[table]} ${table} read, the header announces ${header.counts[table]}`);
    }
  }
  result.vectors = vectors.report.written;
  result.vectorsSkipped = vectors.report.skipped;
  return result;
}

/** Schema failures name what the line was meant to be. */
function checked<T>(what: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`);
  }
}

function parseLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`not valid JSON (${(error as Error).message})`);
  }
}

function count(result: ImportResult, table: keyof ImportResult['created'], created: boolean): void {
  if (created) result.created[table]++;
  else result.present[table]++;
}
