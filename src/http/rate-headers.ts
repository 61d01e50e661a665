import type { FastifyReply } from 'fastify';
import type { RateDecision } from '../ports/rate-limiter.js';

/**
 * The X-RateLimit-* headers of a decision, as whole numbers. `Limit` is requests per second, so
 * the slower public caps (10 unlock attempts a minute, 5 reports an hour) round up to 1;
 * `Retry-After` still says exactly when to come back. Names are given in lower case, as Fastify
 * and Node store them: a name that is already lower case is used as it is, not copied per request.
 */
export function eachRateHeader(d: RateDecision, set: (name: string, value: string) => void): void {
  set('x-ratelimit-limit', String(Math.max(1, Math.ceil(d.limit))));
  set('x-ratelimit-remaining', String(d.remaining));
  set('x-ratelimit-reset', String(d.resetAt));
}

export function setRateHeaders(reply: FastifyReply, d: RateDecision): void {
  eachRateHeader(d, (name, value) => reply.header(name, value));
}
