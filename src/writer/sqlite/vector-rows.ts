// Reading and writing rows of the sqlite-vec table `memory_vectors` (rowid = memory rowid,
// namespace_id partition key, embedding float[N]) for offline restore, export and import.
// The table exists only once an embedder has run, so every path copes with its absence.
// Vectors from a different embedder than the database's are skipped, never mixed in: they
// would be compared in the wrong space. sqlite-vec wants BigInt for integer columns.
import { readMeta, vectorFromBlob } from '../../shared/meta.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/db.js';
import { INSERT_VECTOR_SQL, UNASSIGNED_CELL, vectorCellSql, vectorTableSql } from '../../shared/sql-schema.js';
import { vectorTableShape } from './vector-table.js';
import { nextVectorSeq } from './vector-seq.js';

export interface VectorReport {
  written: number;
  /** Not written: another embedder, another dimension. */
  skipped: number;
}

export class VectorRows {
  readonly report: VectorReport = { written: 0, skipped: 0 };
  private insert: Statement | null = null;
  private reader: Statement | null = null;
  private markEmbedded: Statement | null = null;
  private cellOf: Statement | null = null;

  /** `now`: the clock the rule for superseded facts' vectors reads (the writer's, in the service). */
  constructor(private readonly db: Db, private readonly namespaceId: number, private readonly now: () => number = Date.now) {}

  /** Dimension of the existing table, or null when there is none. */
  dimensions(): number | null {
    return vectorTableShape(this.db)?.dimensions ?? null;
  }

  embedder(): string | null {
    return readMeta(this.db, 'embedder');
  }

  read(rowid: number): number[] | null {
    if (this.reader === null) {
      if (this.dimensions() === null) return null;
      this.reader = this.db.prepare('SELECT embedding FROM memory_vectors WHERE rowid = ?');
    }
    const row = this.reader.get(BigInt(rowid)) as { embedding: Buffer } | undefined;
    if (!row) return null;
    return vectorFromBlob(row.embedding);
  }

  /**
   * Stores one vector for a memory just inserted. `embedder` is the one the vector came from;
   * without a table yet, the first vector creates it (and records its embedder).
   */
  write(rowid: number, embedding: number[], embedder: string | null): boolean {
    let dimensions = this.dimensions();
    if (dimensions === null) {
      this.db.exec(vectorTableSql(embedding.length));
      if (embedder !== null) {
        this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('embedder', ?)").run(embedder);
        this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('embedding_dimensions', ?)").run(String(embedding.length));
      }
      dimensions = embedding.length;
    }
    const current = this.embedder();
    if (embedding.length !== dimensions || (current !== null && embedder !== null && current !== embedder)) {
      // A vector from another embedder is useless here: the service's backfill re-embeds the row.
      this.db.prepare('UPDATE memories SET embedded = 0 WHERE rowid = ?').run(rowid);
      this.report.skipped++;
      return false;
    }
    // Unassigned: the service's vector indexer moves it into its IVF cell. A fact superseded
    // already goes to the unassigned cell's retired twin (docs/superseded-vectors.md).
    this.cellOf ??= this.db.prepare(`SELECT ${vectorCellSql('m', String(UNASSIGNED_CELL))} FROM memories m WHERE m.rowid = @rowid`).pluck();
    const cell = (this.cellOf.get({ now: this.now(), rowid }) as number | undefined) ?? UNASSIGNED_CELL;
    this.insert ??= this.db.prepare(INSERT_VECTOR_SQL);
    this.insert.run(BigInt(rowid), BigInt(this.namespaceId), BigInt(cell), Buffer.from(new Float32Array(embedding).buffer));
    this.markEmbedded ??= this.db.prepare(`UPDATE memories SET embedded = 1, vector_cell = ${UNASSIGNED_CELL}, vector_seq = ? WHERE rowid = ?`);
    this.markEmbedded.run(nextVectorSeq(), rowid);
    this.report.written++;
    return true;
  }
}
