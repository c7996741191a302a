// Endpoints for operators rather than agents: Prometheus metrics and the OpenAPI document.
// They are ordinary routes, so they pass the same draining, auth and rate-limit gate as the
// rest (when keys are set, a scraper needs one too). The memory console's files are public
// mounts: the page holds no data and sends the key the operator types with each API call.
import { fileURLToPath } from 'node:url';
import type { ServiceMetrics } from '../core/metrics.js';
import type { Logger } from '../shared/logger.js';
import { answerOf } from '../core/operations/contract.js';
import { fail } from '../shared/errors.js';
import type { Mount } from './mount.js';
import { MetricsText, OpenApiDocument } from '../shared/schemas.js';
import { buildOpenApiDocument, type OpenApiOptions } from './openapi.js';
import { RawBody } from './respond.js';
import type { Route } from './routes.js';
import { createStaticMounts } from './static-files.js';

/** The API routes followed by the operator ones; the document describes all of them. */
export function withOperatorRoutes(api: Route[], metrics: ServiceMetrics, options: OpenApiOptions): Route[] {
  let document: unknown = null;
  const operator: Route[] = [
    {
      method: 'get', path: '/metrics', status: 200, response: MetricsText, produces: 'text/plain', ignoresQuery: true,
      summary: 'Prometheus metrics',
      // The gauges count SERVICE_NAMESPACE's memories and the whole process's work: not a bound key's to see.
      handle: async (_ops, { scope }) => {
        if (!scope.operator) throw fail.operatorOnly();
        return new RawBody(metrics.contentType, await metrics.render());
      },
    },
    {
      method: 'get', path: '/v1/openapi.json', status: 200, response: OpenApiDocument, ignoresQuery: true,
      summary: 'This OpenAPI 3.1 document',
      // Built on first request: the route table is fixed once the service starts.
      handle: async () => answerOf(document ??= buildOpenApiDocument(routes, options)),
    },
  ];
  const routes = [...api, ...operator];
  return routes;
}

export const CONSOLE_PATH = '/console';
/**
 * The console's files: src/console beside src/http, which the build copies to dist/src/console
 * beside dist/src/http — so the same relative URL finds them from the sources, from dist and
 * from an installed package (which ships dist/src).
 */
export const CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

/**
 * `service.json` tells the page whether the service wants a key, without a key: a probe of an
 * authenticated route would count as a failed sign-in, and behind a proxy every browser shares
 * the agents' address, so a few fresh tabs would lock the agents out. (A 401 says as much anyway.)
 */
export function operatorMounts(log: Logger, { auth }: { auth: boolean }): Mount[] {
  return createStaticMounts({ prefix: CONSOLE_PATH, dir: CONSOLE_DIR, log, generated: { 'service.json': { auth_required: auth } } });
}
