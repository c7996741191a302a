// Which namespace a command acts on. Every request names its namespace (resolved where it was
// authenticated); a namespace exists once something is stored in it. Commands that store
// something new create its row; every other command on a namespace that does not exist acts on
// ABSENT_NAMESPACE_ID, which holds no rows (ids start at 1), so it finds nothing and creates
// nothing — a read or a delete never makes a namespace appear.
import type { WriterCommandType } from '../../shared/protocol/writer.js';

export const ABSENT_NAMESPACE_ID = 0;

const CREATING: ReadonlySet<WriterCommandType> = new Set<WriterCommandType>(['ensureEntity', 'remember', 'rememberBatch', 'startEpisode', 'importEpisode', 'restoreRows']);

/** Whether running this command in a namespace that does not exist yet creates it. */
export function createsNamespace(type: WriterCommandType): boolean {
  return CREATING.has(type);
}

/** Rule contexts (and row ports) kept per writer, least recently used dropped past this. */
export const NAMESPACE_CONTEXTS = 256;
