// Endpoints for operators rather than agents: Prometheus metrics and the OpenAPI document.
// They are ordinary routes, so they pass the same draining, auth and rate-limit gate as the
// rest (when keys are set, a scraper needs one too).
import type { ServiceMetrics } from '../core/metrics.js';
import { MetricsText, OpenApiDocument } from '../shared/schemas.js';
import { buildOpenApiDocument, type OpenApiOptions } from './openapi.js';
import { RawBody } from './respond.js';
import type { Route } from './routes.js';

/** The API routes followed by the operator ones; the document describes all of them. */
export function withOperatorRoutes(api: Route[], metrics: ServiceMetrics, options: OpenApiOptions): Route[] {
  let document: unknown = null;
  const operator: Route[] = [
    {
      method: 'get', path: '/metrics', status: 200, response: MetricsText, produces: 'text/plain',
      summary: 'Prometheus metrics', handle: async () => new RawBody(metrics.contentType, await metrics.render()),
    },
    {
      method: 'get', path: '/v1/openapi.json', status: 200, response: OpenApiDocument,
      summary: 'This OpenAPI 3.1 document',
      // Built on first request: the route table is fixed once the service starts.
      handle: async () => (document ??= buildOpenApiDocument(routes, options)),
    },
  ];
  const routes = [...api, ...operator];
  return routes;
}
