// The OpenAPI document a service with the reference's configuration serves, built as the
// service builds it (its route table, then the operator routes), without starting one.
import { buildOpenApiDocument } from '../http/openapi.js';
import { withOperatorRoutes } from '../http/operator-routes.js';
import { buildRoutes } from '../http/routes.js';
import type { ServiceMetrics } from '../core/metrics.js';
import { REFERENCE_OPTIONS } from './api-reference.js';

export function referenceDocument(): Record<string, unknown> {
  // The metrics are read only when GET /metrics is answered, which never happens here.
  const routes = withOperatorRoutes(buildRoutes(), null as unknown as ServiceMetrics, { version: '', ...REFERENCE_OPTIONS });
  return buildOpenApiDocument(routes, { version: '', ...REFERENCE_OPTIONS }) as Record<string, unknown>;
}
