import { Type } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';

/** A query string that allows no parameter at all. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * An `onRoute` hook: unknown query parameters are refused, not ignored (docs/api.md), so every
 * REST route (`/health`, `/v1/…`) that declares no query string of its own gets one that allows
 * none. Routes that take parameters declare them with `additionalProperties: false` (or, like the
 * list, check them in the core). The OAuth, dashboard and MCP routes on the same listener follow
 * their own protocols (OAuth clients may add parameters a server must ignore) and are left alone.
 */
export function strictQuerystring(route: RouteOptions): void {
  if (route.url !== '/health' && !route.url.startsWith('/v1/')) return;
  route.schema ??= {};
  route.schema.querystring ??= NoQuery;
}
