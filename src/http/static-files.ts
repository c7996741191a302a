// Serving a folder of static files (the memory console) under a path prefix, as a mount. The
// folder is read once, when the service starts: the set of servable names is then fixed, so
// no request path ever reaches the file system (no traversal to guard against), and each file
// carries a content hash as its ETag. The files have no build step and so no hashed names;
// browsers revalidate them on every load (`no-cache`) and get a bodiless 304 when unchanged.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { ServiceError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { headerOf, type Mount } from './mount.js';
import { RawBody, sendError, sendRaw } from './respond.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Sent with every file: the page runs only its own scripts and talks only to this origin. */
const SECURITY_HEADERS = {
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

interface StaticFile {
  type: string;
  bytes: Buffer;
  etag: string;
}

function staticFile(type: string, bytes: Buffer): StaticFile {
  return { type, bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` };
}

/** Every file under `dir` with a known type, keyed by its path relative to `dir` ('/'-separated). */
export function loadStaticFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const visit = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) {
        visit(path);
        continue;
      }
      const type = CONTENT_TYPES[extname(name).toLowerCase()];
      if (!type) continue;
      files.set(relative(dir, path).split(sep).join('/'), staticFile(type, readFileSync(path)));
    }
  };
  if (existsSync(dir)) visit(dir);
  return files;
}

/**
 * Whether an If-None-Match header matches `etag`: `*`, or any listed tag by weak comparison
 * (RFC 9110 §13.1.2: a `W/` prefix is ignored), which is what §13.1.2 asks of If-None-Match.
 */
export function noneMatchHits(header: string, etag: string): boolean {
  const value = header.trim();
  if (value === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export interface StaticMountOptions {
  /** URL prefix without a trailing slash, e.g. '/console'. */
  prefix: string;
  dir: string;
  log: Logger;
  /** Documents made at start and served as JSON beside the files (name → value). */
  generated?: Record<string, unknown>;
}

/**
 * Two mounts: `prefix/*` serves the files (`prefix/` is index.html) and the bare `prefix`
 * redirects to `prefix/`, so the page's relative URLs resolve inside the prefix. Both are
 * public: the files hold no data, and the page sends the API key with each API call itself.
 */
export function createStaticMounts({ prefix, dir, log, generated = {} }: StaticMountOptions): Mount[] {
  const files = loadStaticFiles(dir);
  for (const [name, value] of Object.entries(generated)) files.set(name, staticFile(CONTENT_TYPES['.json'], Buffer.from(JSON.stringify(value))));
  if (!files.has('index.html')) log.warn({ dir }, `no index.html for ${prefix}: it answers 404 (was the build's copy step skipped?)`);
  const allowed = (method: string) => method === 'GET' || method === 'HEAD';
  const refuseMethod = (ex: Parameters<Mount['handle']>[0], method: string) =>
    sendError(ex, new ServiceError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${prefix}; use GET, HEAD`), { Allow: 'GET, HEAD' });
  return [
    {
      path: prefix,
      public: true,
      handle: async (ex, request) => {
        if (!allowed(request.method)) return refuseMethod(ex, request.method);
        // Relative, so it also lands right behind a proxy that serves the service under a prefix.
        const last = prefix.slice(prefix.lastIndexOf('/') + 1);
        sendRaw(ex, 308, new RawBody('text/plain; charset=utf-8', ''), { Location: `${last}/` });
      },
    },
    {
      path: `${prefix}/*`,
      public: true,
      handle: async (ex, request) => {
        if (!allowed(request.method)) return refuseMethod(ex, request.method);
        const name = request.url.slice(prefix.length + 1) || 'index.html';
        const file = files.get(name);
        if (!file) throw new ServiceError('ROUTE_NOT_FOUND', `no file ${prefix}/${name}`);
        const headers = { ...SECURITY_HEADERS, ETag: file.etag };
        if (noneMatchHits(headerOf(request, 'if-none-match'), file.etag)) return sendRaw(ex, 304, new RawBody(file.type, ''), headers);
        sendRaw(ex, 200, new RawBody(file.type, file.bytes), headers);
      },
    },
  ];
}
