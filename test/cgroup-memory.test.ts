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

test('v2 in a cgroup namespace: the mount is the namespace\'s root; a path outside it reads the root only', () => {
  assert.equal(limitOf('0::/\n', { 'memory.max': `${300 * MiB}\n` }), 300 * MiB);
  assert.equal(limitOf('0::/../../other\n', { 'memory.max': `${300 * MiB}\n`, 'other/memory.max': `${100 * MiB}\n` }), 300 * MiB);
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

test('hybrid (v1 memory controller beside a v2 line): the lowest of both', () => {
  assert.equal(limitOf('4:memory:/job\n0::/job\n', {
    'memory/job/memory.limit_in_bytes': `${900 * MiB}\n`,
    'job/memory.max': `${700 * MiB}\n`,
  }), 700 * MiB);
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
