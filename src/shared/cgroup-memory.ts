// The memory limit the cgroups set on this process. Node's process.constrainedMemory() is libuv's
// uv_get_constrained_memory (src/unix/linux.c; Node 20 ships libuv 1.46), which reads the limits of
// the process's own cgroup only: cgroup v2's memory.max and memory.high there, or v1's
// memory.limit_in_bytes (falling back to the v1 root's). libuv's newer main branch walks the v2
// hierarchy up for cpu.max, but still not for memory. A limit set on an ancestor binds as well (a
// systemd slice with MemoryMax=, a container runtime's parent group, a job scheduler's
// allocation), and is the usual place for one: the effective limit is the lowest on the way from
// the process's cgroup up to the root (on v1, up to the first ancestor not in hierarchical mode).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the cgroup files are: the process's membership list and the cgroup filesystems' mount point. */
export interface CgroupFiles {
  /** /proc/self/cgroup: `<id>:<controllers>:<path>` lines; `0::<path>` is cgroup v2. */
  membership: string;
  /**
   * /sys/fs/cgroup: v2's hierarchy, or v1's controllers in folders of their own (memory/), with
   * v2's beside them in unified/ on a hybrid host (systemd's "hybrid" mode).
   */
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
      ? lowestOnTheWayUp(v2Mount(files.root), path, 'memory.max', null)
      : controllers.split(',').includes('memory') ? lowestOnTheWayUp(join(files.root, 'memory'), path, 'memory.limit_in_bytes', 'memory.use_hierarchy') : 0;
    if (found > 0 && (lowest === 0 || found < lowest)) lowest = found;
  }
  return lowest;
}

/**
 * Where v2's hierarchy is mounted: `root` itself, or on a hybrid host (v1 controllers in folders
 * of `root`, a tmpfs) its unified/ folder. Every v2 cgroup folder holds cgroup.controllers; a v1
 * tmpfs does not. There the memory controller is usually v1's and v2's folders hold no memory.max;
 * when it is v2's (cgroup_no_v1=memory), its limits are under unified/, not under `root`.
 */
function v2Mount(root: string): string {
  const unified = join(root, 'unified');
  return !existsSync(join(root, 'cgroup.controllers')) && existsSync(join(unified, 'cgroup.controllers')) ? unified : root;
}

/**
 * The lowest limit in `file` of the cgroup at `path` and of the ancestors whose limits bind it,
 * under `mount`. Folders that do not exist (a container shown its host's path, the root cgroup
 * without memory.max) are skipped.
 * A path outside this cgroup namespace's view ("/../..", cgroup_namespaces(7)) names a cgroup
 * that is not under the mount: the mount's root is the namespace's, not an ancestor of the
 * process, so no limit there binds it. None is read (0).
 * `hierarchical`: v1's memory.use_hierarchy. A cgroup is charged to its parent only while the
 * parent's is 1 (cgroup-v1/memory.rst, "Hierarchy support"); a parent at 0, and every cgroup
 * above it, limits only its own tasks. A missing file reads as 1 (since Linux 5.11 there is only
 * the hierarchical mode).
 */
function lowestOnTheWayUp(mount: string, path: string, file: string, hierarchical: string | null): number {
  const levels = path.split('/').filter((part) => part !== '');
  if (levels.includes('..')) return 0;
  let lowest = 0;
  // The deepest folder there is stands for the process's own cgroup: its own use_hierarchy does not matter.
  let own = true;
  for (let depth = levels.length; depth >= 0; depth--) {
    const folder = join(mount, ...levels.slice(0, depth));
    if (!existsSync(folder)) continue;
    if (!own && hierarchical !== null && readText(join(folder, hierarchical))?.trim() === '0') break;
    own = false;
    const limit = limitIn(readText(join(folder, file)));
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
