// shared/cgroup-memory.ts: the lowest memory limit from the process's cgroup up to the root, read
// from a real folder tree of cgroup files built in a temp folder (a membership file as
// /proc/self/cgroup writes it, and the limit files under a mount point as /sys/fs/cgroup holds them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupMemoryLimit } from '../src/shared/cgroup-memory.js';
import { tempDir } from './support/service.js';

const MiB = 2 ** 20;
/** cgroup v1's "no limit": LONG_MAX rounded down to a page. */
const V1_UNLIMITED = '9223372036854771712';

/** Writes `files` (path under the mount → content) and the membership list; returns where to read them. */
function cgroups(membership: string, files: Record<string, string>) {
  const dir = tempDir('memrt-cgroup-');
  const root = join(dir, 'sys-fs-cgroup');
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  writeFileSync(join(dir, 'cgroup'), membership);
  return { files: { membership: join(dir, 'cgroup'), root }, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const limitOf = (membership: string, files: Record<string, string>) => {
  const tree = cgroups(membership, files);
  try {
    return cgroupMemoryLimit(tree.files);
  } finally {
    tree.done();
  }
};

test('v2: a limit on a parent slice binds a process whose own cgroup has none', () => {
  assert.equal(limitOf('0::/app.slice/memrt.service\n', {
    'app.slice/memory.max': `${1024 * MiB}\n`,
    'app.slice/memrt.service/memory.max': 'max\n',
  }), 1024 * MiB);
});

test('v2: the lowest limit on the way up wins, the own cgroup\'s or an ancestor\'s', () => {
  const tree = {
    'a/memory.max': `${4096 * MiB}\n`,
    'a/b/memory.max': `${512 * MiB}\n`,
    'a/b/c/memory.max': `${2048 * MiB}\n`,
  };
  assert.equal(limitOf('0::/a/b/c\n', tree), 512 * MiB);
  assert.equal(limitOf('0::/a/b/c\n', { ...tree, 'a/b/c/memory.max': `${256 * MiB}\n` }), 256 * MiB);
  // A limit in a sibling's folder is not on the way up.
  assert.equal(limitOf('0::/a/x\n', { ...tree, 'a/x/memory.max': 'max\n' }), 4096 * MiB);
});

test('v2: "max" everywhere, no memory.max at the root, or no folders at all: no limit (0)', () => {
  assert.equal(limitOf('0::/a/b\n', { 'a/memory.max': 'max\n', 'a/b/memory.max': 'max\n' }), 0);
  assert.equal(limitOf('0::/\n', {}), 0);
  assert.equal(limitOf('0::/not/here\n', { 'cgroup.controllers': 'cpu memory\n' }), 0);
});

test('in a cgroup namespace the mount is the namespace\'s root; a path outside it (`/../..`) binds to nothing under the mount: no limit', () => {
  assert.equal(limitOf('0::/\n', { 'memory.max': `${300 * MiB}\n` }), 300 * MiB);
  // The process is in a cousin of the namespace's root (moved there after the namespace was made):
  // neither the root's limit nor a folder the path's last part happens to name under it is its.
  assert.equal(limitOf('0::/../../other\n', { 'memory.max': `${300 * MiB}\n`, 'other/memory.max': `${100 * MiB}\n` }), 0);
  assert.equal(limitOf('0::/..\n', { 'memory.max': `${300 * MiB}\n` }), 0);
  // v1 the same way.
  assert.equal(limitOf('4:memory:/../x\n', { 'memory/memory.limit_in_bytes': `${300 * MiB}\n`, 'memory/x/memory.limit_in_bytes': `${100 * MiB}\n` }), 0);
});

test('v1: the memory controller\'s folder, walked up the same way; its "no limit" is a huge number', () => {
  const membership = '12:pids:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n';
  assert.equal(limitOf(membership, {
    'memory/memory.limit_in_bytes': V1_UNLIMITED,
    'memory/docker/memory.limit_in_bytes': `${768 * MiB}\n`,
    'memory/docker/abc/memory.limit_in_bytes': `${V1_UNLIMITED}\n`,
  }), 768 * MiB);
  // A container shown its host's path with the controller mounted at its own cgroup: the folders
  // of the path are not there, the mount's own file is the container's limit.
  assert.equal(limitOf(membership, { 'memory/memory.limit_in_bytes': `${640 * MiB}\n` }), 640 * MiB);
  // The controller mounted with another (memory,hugetlb): still the memory folder.
  assert.equal(limitOf('5:hugetlb,memory:/job\n', { 'memory/job/memory.limit_in_bytes': `${100 * MiB}\n` }), 100 * MiB);
  // Other controllers' limits are not memory limits.
  assert.equal(limitOf('3:cpu:/job\n', { 'memory/job/memory.limit_in_bytes': `${100 * MiB}\n` }), 0);
});

test('v1 with memory.use_hierarchy=0: a parent that is not hierarchical, and every cgroup above it, does not bind its children', () => {
  const membership = '4:memory:/a/b/c\n';
  const tree = {
    'memory/memory.limit_in_bytes': V1_UNLIMITED,
    'memory/a/memory.limit_in_bytes': `${256 * MiB}\n`,
    'memory/a/b/memory.limit_in_bytes': `${512 * MiB}\n`,
    'memory/a/b/c/memory.limit_in_bytes': `${2048 * MiB}\n`,
  };
  // No use_hierarchy files (Linux 5.11 on: always hierarchical), or 1 everywhere: the lowest up to the root.
  assert.equal(limitOf(membership, tree), 256 * MiB);
  assert.equal(limitOf(membership, {
    ...tree, 'memory/a/memory.use_hierarchy': '1\n', 'memory/a/b/memory.use_hierarchy': '1\n', 'memory/a/b/c/memory.use_hierarchy': '1\n',
  }), 256 * MiB);
  // a at 0 (a child is created with its parent's setting, so b and c could be 1): c is charged
  // to b, b is not charged to a.
  assert.equal(limitOf(membership, { ...tree, 'memory/a/memory.use_hierarchy': '0\n', 'memory/a/b/memory.use_hierarchy': '1\n' }), 512 * MiB);
  // b at 0: only c's own limit binds; c's own setting is about its children, not about c.
  assert.equal(limitOf(membership, { ...tree, 'memory/a/memory.use_hierarchy': '0\n', 'memory/a/b/memory.use_hierarchy': '0\n', 'memory/a/b/c/memory.use_hierarchy': '0\n' }), 2048 * MiB);
  // The old default: the root at 0, the container runtime's group hierarchical: its limit binds.
  assert.equal(limitOf('4:memory:/docker/abc\n', {
    'memory/memory.use_hierarchy': '0\n',
    'memory/docker/memory.use_hierarchy': '1\n', 'memory/docker/memory.limit_in_bytes': `${768 * MiB}\n`,
    'memory/docker/abc/memory.use_hierarchy': '1\n', 'memory/docker/abc/memory.limit_in_bytes': V1_UNLIMITED,
  }), 768 * MiB);
  // A container shown its host's path, the mount being its own cgroup: its use_hierarchy is about its children.
  assert.equal(limitOf('4:memory:/docker/abc\n', { 'memory/memory.use_hierarchy': '0\n', 'memory/memory.limit_in_bytes': `${640 * MiB}\n` }), 640 * MiB);
});

// systemd's hybrid mode: /sys/fs/cgroup is a tmpfs with a folder per v1 controller, and the v2
// hierarchy is mounted at /sys/fs/cgroup/unified (its folders, like every v2 cgroup's, hold
// cgroup.controllers). /proc/self/cgroup has both the v1 lines and the `0::` line.
test('hybrid: v2\'s limits are read under unified/, v1\'s under memory/; the memory controller is on one of them', () => {
  const hybrid = (files: Record<string, string>) => ({ 'unified/cgroup.controllers': '\n', 'unified/job/cgroup.controllers': '\n', ...files });
  const membership = '4:memory:/job\n3:cpu,cpuacct:/job\n1:name=systemd:/job\n0::/job\n';
  // The memory controller on v1 (systemd's hybrid mode binds every controller there): v1's limit.
  assert.equal(limitOf(membership, hybrid({ 'memory/job/memory.limit_in_bytes': `${900 * MiB}\n` })), 900 * MiB);
  // The memory controller on v2 (cgroup_no_v1=memory): no v1 memory line; the limit is under unified/.
  const onV2 = '3:cpu,cpuacct:/job\n1:name=systemd:/job\n0::/job\n';
  assert.equal(limitOf(onV2, hybrid({ 'unified/job/memory.max': `${700 * MiB}\n` })), 700 * MiB);
  assert.equal(limitOf('0::/job/task\n', hybrid({ 'unified/job/memory.max': `${700 * MiB}\n`, 'unified/job/task/memory.max': 'max\n' })), 700 * MiB);
  // A pure v2 host keeps reading the mount itself, even with a cgroup named unified at its root.
  assert.equal(limitOf('0::/job\n', {
    'cgroup.controllers': 'cpu memory\n', 'job/memory.max': `${300 * MiB}\n`,
    'unified/cgroup.controllers': 'memory\n', 'unified/job/memory.max': `${100 * MiB}\n`,
  }), 300 * MiB);
});

test('never throws: no membership file, garbage in it or in a limit file is no limit', () => {
  assert.equal(cgroupMemoryLimit({ membership: '/nonexistent/cgroup', root: '/nonexistent' }), 0);
  assert.equal(limitOf('garbage\n\n::\n', { 'memory.max': `${100 * MiB}\n` }), 0);
  assert.equal(limitOf('0::/a\n', { 'a/memory.max': 'lots\n', 'memory.max': '-5\n' }), 0);
  // A folder where a limit file should be: unreadable, skipped.
  assert.equal(limitOf('0::/a\n', { 'a/memory.max/x': '1\n', 'memory.max': `${200 * MiB}\n` }), 200 * MiB);
});

test('on this machine: a number, without throwing', () => {
  assert.ok(Number.isFinite(cgroupMemoryLimit()) && cgroupMemoryLimit() >= 0);
});
