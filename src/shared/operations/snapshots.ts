// Deletion snapshots, for operators (issue 15): listing them and restoring one online. No MCP
// tool on purpose: a `forget` is often someone's request to be forgotten, and a tool that undoes
// it would let a model bring the data back on its own judgement (README, MCP).
import { EmptyBody, ListSnapshotsResponse, RestoreResponse, SnapshotParams } from '../schemas.js';
import { declareOperation } from './declare.js';

export const listSnapshots = declareOperation({
  name: 'listSnapshots',
  input: EmptyBody,
  output: ListSnapshotsResponse,
  errors: [],
  rest: [{
    method: 'get', path: '/v1/snapshots', body: null,
    summary: 'Deletion snapshots beside the database, oldest first (damaged files with their problem)',
  }],
});

export const restoreSnapshot = declareOperation({
  name: 'restoreSnapshot',
  input: SnapshotParams,
  output: RestoreResponse,
  position: 'returned',
  errors: ['SNAPSHOT_NOT_FOUND', 'SNAPSHOT_CONFLICT', 'SNAPSHOT_UNUSABLE', 'RESTORE_INTERRUPTED', 'RESTORE_BUSY', 'STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{
    method: 'post', path: '/v1/snapshots/:snapshot_id/restore', body: null,
    summary: "Put a deleted entity's memories back from its snapshot; memories already present are skipped",
  }],
});
