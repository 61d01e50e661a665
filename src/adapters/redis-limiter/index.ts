export { RedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
