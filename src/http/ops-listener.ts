import Fastify, { type FastifyInstance } from 'fastify';
import type { CairnMetrics } from '../metrics/registry.js';
import type { Readiness } from '../readiness.js';

/**
 * The operators' listener (CAIRN_METRICS_PORT, loopback unless CAIRN_METRICS_HOST says
 * otherwise): `GET /metrics` in the Prometheus text format and `GET /ready` for load balancers
 * and Kubernetes readiness probes. Kept off the API's port so neither is reachable by tenants
 * or counted against anyone's limits.
 */
export async function buildOpsApp(
  metrics: CairnMetrics,
  readiness: () => Promise<Readiness>,
  logLevel: string,
): Promise<FastifyInstance> {
  const app = Fastify({ logger: logLevel === 'silent' ? false : { level: logLevel, stream: process.stderr } });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.get('/metrics', async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
  app.get('/ready', async (_request, reply) => {
    // A draining instance stops taking traffic before its listeners close.
    const result: Readiness = closing
      ? { ready: false, checks: { shutdown: 'failed: shutting down' } }
      : await readiness();
    return reply
      .status(result.ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: result.ready ? 'ready' : 'not_ready', checks: result.checks });
  });
  app.get('/health', async () => ({ status: 'ok' }));
  return app;
}
