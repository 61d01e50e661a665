import type { FastifyReply } from 'fastify';
import type { RateDecision } from '../ports/rate-limiter.js';

/**
 * The X-RateLimit-* headers of a decision, as whole numbers. `Limit` is requests per second, so
 * the slower public caps (10 unlock attempts a minute, 5 reports an hour) round up to 1;
 * `Retry-After` still says exactly when to come back.
 */
export function setRateHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('X-RateLimit-Limit', String(Math.max(1, Math.ceil(d.limit))));
  reply.header('X-RateLimit-Remaining', String(d.remaining));
  reply.header('X-RateLimit-Reset', String(d.resetAt));
}
