// Text PostgreSQL cannot store although SQLite does: U+0000 (NUL) in a text or jsonb value
// (SQLSTATE 22021 / 22P05). The request is valid by the API contract, so the command fails alone
// with a 4xx naming the field that holds it, never an INTERNAL. A key the command only looks up
// (an episode id, the entity a delete names) cannot name anything stored here: that is SQLite's
// answer for an unknown key, not found.
import { fail, type ServiceError } from '../../shared/errors.js';
import type { WriterCommand } from '../../shared/protocol/writer.js';
import { storableText } from '../../shared/postgres-text.js';

/** character_not_in_repertoire (text) and untranslatable_character (jsonb). */
const NUL_SQLSTATES = new Set(['22021', '22P05']);

/** Deep enough for every command's strings (endEpisode: memories[i].entities[j]). */
const MAX_DEPTH = 4;

/** The path of the first string holding U+0000 ('participants[1]', 'memories[0].content'), or null. */
function nulPath(value: unknown, path: string, depth: number): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (depth >= MAX_DEPTH || value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return null;
  for (const [key, inner] of Object.entries(value)) {
    const found = nulPath(inner, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, depth + 1);
    if (found) return found;
  }
  return null;
}

/** The not-found a lookup key holding NUL gets (what SQLite answers for that unknown key), or null. */
function unknownKey(command: WriterCommand): ServiceError | null {
  switch (command.type) {
    case 'addMessage':
    case 'endEpisode':
      return !storableText(command.episodeId) ? fail.episodeNotFound(command.episodeId) : null;
    case 'forgetBegin':
      return !storableText(command.entity) ? fail.entityNotFound(command.entity) : null;
    default:
      return null;
  }
}

/** The 4xx for a command PostgreSQL refused for a NUL character in it, or null for any other failure. */
export function unstorableText(command: WriterCommand, error: unknown): ServiceError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !NUL_SQLSTATES.has(code)) return null;
  const unknown = unknownKey(command);
  if (unknown) return unknown;
  const { type: _type, ...fields } = command;
  return fail.nulCharacter(nulPath(fields, '', 0) ?? 'body');
}
