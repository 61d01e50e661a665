import type { FastifyReply } from 'fastify';
import type { RateDecision } from '../ports/rate-limiter.js';

/**
 * The X-RateLimit-* headers of a decision, all three about one sliding window: `Limit` is the
 * requests it holds (the burst: 200 for the 100/s tenant limit, 10 for the unlock cap of a
 * minute), `Remaining` what is left of them (never more than `Limit`), `Reset` when the oldest
 * counted request leaves it. Names are given in lower case, as Fastify and Node store them: a
 * name that is already lower case is used as it is, not copied per request.
 */
export function eachRateHeader(d: RateDecision, set: (name: string, value: string) => void): void {
  set('x-ratelimit-limit', String(d.limit));
  set('x-ratelimit-remaining', String(d.remaining));
  set('x-ratelimit-reset', String(d.resetAt));
}

export function setRateHeaders(reply: FastifyReply, d: RateDecision): void {
  eachRateHeader(d, (name, value) => reply.header(name, value));
}
