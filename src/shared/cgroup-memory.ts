// The memory limit the cgroups set on this process. Node's process.constrainedMemory() is libuv's
// uv_get_constrained_memory (src/unix/linux.c; Node 20 ships libuv 1.46), which reads the limits of
// the process's own cgroup only: cgroup v2's memory.max and memory.high there, or v1's
// memory.limit_in_bytes (falling back to the v1 root's). libuv's newer main branch walks the v2
// hierarchy up for cpu.max, but still not for memory. A limit set on an ancestor binds as well (a
// systemd slice with MemoryMax=, a container runtime's parent group, a job scheduler's
// allocation), and is the usual place for one: the effective limit is the lowest on the way from
// the process's cgroup up to the root.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the cgroup files are: the process's membership list and the cgroup filesystems' mount point. */
export interface CgroupFiles {
  /** /proc/self/cgroup: `<id>:<controllers>:<path>` lines; `0::<path>` is cgroup v2. */
  membership: string;
  /** /sys/fs/cgroup: v2's hierarchy, or v1's controllers in folders of their own (memory/). */
  root: string;
}

const SYSTEM_CGROUPS: CgroupFiles = { membership: '/proc/self/cgroup', root: '/sys/fs/cgroup' };

/**
 * The lowest memory limit from the process's cgroup up to the root, in bytes; 0 when none is set
 * ("max") or none can be read. A few small reads; never throws (an unreadable file is no limit).
 * A v1 "no limit" reads as a huge number: callers compare with the machine's memory.
 */
export function cgroupMemoryLimit(files: CgroupFiles = SYSTEM_CGROUPS): number {
  const membership = readText(files.membership);
  if (membership === null) return 0;
  let lowest = 0;
  for (const line of membership.split('\n')) {
    const match = /^\d+:([^:]*):(\/.*)$/.exec(line.trim());
    if (!match) continue;
    const [, controllers, path] = match;
    const found = controllers === ''
      ? lowestOnTheWayUp(files.root, path, 'memory.max')
      : controllers.split(',').includes('memory') ? lowestOnTheWayUp(join(files.root, 'memory'), path, 'memory.limit_in_bytes') : 0;
    if (found > 0 && (lowest === 0 || found < lowest)) lowest = found;
  }
  return lowest;
}

/**
 * The lowest limit in `file` of the cgroup at `path` and each of its ancestors under `mount`.
 * A path outside this cgroup namespace's view ("/../..") reads the root's only. Folders that do
 * not exist (a container shown its host's path, the root cgroup without memory.max) are skipped.
 */
function lowestOnTheWayUp(mount: string, path: string, file: string): number {
  const parts = path.split('/').filter((part) => part !== '');
  const levels = parts.includes('..') ? [] : parts;
  let lowest = 0;
  for (let depth = levels.length; depth >= 0; depth--) {
    const limit = limitIn(readText(join(mount, ...levels.slice(0, depth), file)));
    if (limit > 0 && (lowest === 0 || limit < lowest)) lowest = limit;
  }
  return lowest;
}

/** A limit file's bytes; 0 for "max", nothing or anything else. */
function limitIn(text: string | null): number {
  const value = text?.trim() ?? '';
  return /^\d+$/.test(value) ? Number(value) : 0;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
