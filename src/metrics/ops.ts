import type { ListenerMetrics } from '../http/metrics-hooks.js';
import type { Adapters } from '../runtime.js';
import { CairnMetrics, type ListenerName } from './registry.js';

/**
 * The metrics of one server: the registry, what its listeners share (uploads in flight), and
 * the adapters it reads at scrape time once they exist (pool use, the limiter's fallback).
 */
export function createOps() {
  const uploads = { inFlight: 0 };
  let adapters: Adapters | null = null;
  const metrics = new CairnMetrics({
    uploadsInFlight: () => uploads.inFlight,
    poolStats: () => adapters?.store.poolStats?.() ?? { total: 0, idle: 0, waiting: 0, shed: 0 },
    rateLimiterDegraded: () => (adapters?.limiter as { degraded?: boolean } | null)?.degraded === true,
  });
  return {
    metrics,
    listenerMetrics: (listener: ListenerName): ListenerMetrics => ({ listener, metrics, uploads }),
    watch(a: Adapters) {
      adapters = a;
    },
  };
}
