// DNS-rebinding protection for /mcp. A web page can make a browser send requests to a
// service on localhost under the attacker's own domain name; checking Host (and Origin,
// when a browser sends one) against an allow-list refuses those. Off unless configured
// (SERVICE_MCP_ALLOWED_HOSTS / SERVICE_MCP_ALLOWED_ORIGINS), as in the SDK. Done here rather than
// with the SDK transport's own options, which are deprecated in favour of middleware.
import type { Config } from '../../shared/config.js';

/** The refusal message, or null when the request may proceed. */
export function rebindingRefusal(config: Config, host: string, origin: string): string | null {
  if (config.mcpAllowedHosts.length > 0 && !hostAllowed(config.mcpAllowedHosts, host.toLowerCase())) {
    return `Invalid Host header: ${host || '(none)'}`;
  }
  // Only browsers send Origin; requests without one (SDK clients, IDEs) are not cross-site.
  if (config.mcpAllowedOrigins.length > 0 && origin !== '' && !config.mcpAllowedOrigins.includes(origin.toLowerCase())) {
    return `Invalid Origin header: ${origin}`;
  }
  return null;
}

/** An entry with a port must match exactly; an entry without one allows that host on any port. */
function hostAllowed(allowed: readonly string[], host: string): boolean {
  if (host === '') return false;
  if (allowed.includes(host)) return true;
  try {
    return allowed.includes(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}
