import type { FastifyInstance } from 'fastify';
import { BoundOrigins } from './bound-origins.js';
import { type Config, withBoundPorts } from './config.js';
import { type Accounts, createAccounts } from './core/accounts/index.js';
import type { Core } from './core/index.js';
import { buildApiApp } from './http/api/app.js';
import { ConnectionDrain } from './http/connection-drain.js';
import { buildContentApp } from './http/content/app.js';
import { hostedPlugin } from './http/hosted.js';
import { buildViewerApp } from './http/viewer/app.js';
import type { ListenerName } from './metrics/registry.js';
import { checkReadiness, readinessChecks } from './readiness.js';
import { createRuntime, originsOf, type RuntimeOptions } from './runtime.js';

/** How often an instance looks for webhook deliveries that are due. */
const WEBHOOK_TICK_MS = 250;

export interface RunningServer {
  config: Config;
  core: Core;
  /** Dashboard users, sessions and the OAuth server of the hosted MCP endpoint. */
  accounts: Accounts;
  /** The default tenant's key, only on the first start of an empty data folder. */
  firstRunApiKey: string | null;
  close(): Promise<void>;
}

function boundPort(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('listener has no port');
  return address.port;
}

/**
 * `cairn serve`: one process, three listeners (API, viewer, content), so the content listener
 * physically cannot answer API routes. Closing lets in-flight requests finish, then closes stores.
 */
export async function startServer(
  config: Config,
  opts: RuntimeOptions & { env?: Record<string, string | undefined> } = {},
): Promise<RunningServer> {
  // prom-client (and what it loads) only for an instance that serves metrics.
  const ops = config.metricsPort === undefined ? null : (await import('./metrics/ops.js')).createOps();
  const origins = new BoundOrigins(originsOf(config));
  const runtime = await createRuntime(config, {
    ...opts,
    origins,
    ...(ops ? { observer: ops.metrics.observer } : {}),
  });
  const { core } = runtime;
  const appOpts = {
    logLevel: config.logLevel,
    trustProxy: config.trustProxy,
    bodyIdleTimeoutSeconds: config.uploadIdleTimeoutSeconds,
    eventHeartbeatSeconds: config.eventHeartbeatSeconds,
  };
  const counted = (listener: ListenerName) => (ops ? { metrics: ops.listenerMetrics(listener) } : {});
  const accounts = createAccounts(core, runtime.adapters.accounts);
  const api = await buildApiApp(core, { ...appOpts, ...counted('api'), plugins: [hostedPlugin(accounts, config)] });
  const viewer = await buildViewerApp(core, { ...appOpts, ...counted('viewer') });
  const content = await buildContentApp(core, { ...appOpts, ...counted('content') });
  const apps = [api, viewer, content];
  let draining = false;
  const opsApp = ops
    ? await (await import('./http/ops-listener.js')).buildOpsApp(
        ops.metrics,
        async () =>
          draining
            ? { ready: false, checks: { shutdown: 'failed: shutting down' } }
            : checkReadiness(readinessChecks(runtime.adapters)),
        config.logLevel,
      )
    : null;
  ops?.watch(runtime.adapters);
  const drain = new ConnectionDrain();
  for (const a of apps) drain.track(a);
  let firstRunApiKey: string | null;
  try {
    await listenAs(api, 'API', config.host, config.apiPort);
    await listenAs(viewer, 'viewer', config.host, config.viewerPort);
    await listenAs(content, 'content', config.host, config.contentPort);
    if (opsApp) await listenAs(opsApp, 'metrics', config.metricsHost, config.metricsPort ?? 0);
    // Only once all three ports are ours: the default key is printed once, so a start that fails
    // to bind (a busy port) must not create the tenant and lose its key with the process.
    firstRunApiKey = await core.tenants.ensureDefault();
  } catch (err) {
    await Promise.allSettled([...apps, ...(opsApp ? [opsApp] : [])].map((a) => a.close()));
    await runtime.close();
    throw err;
  }
  const bound = withBoundPorts(
    config,
    { api: boundPort(api), viewer: boundPort(viewer), content: boundPort(content) },
    opts.env ?? {},
  );
  if (opsApp) bound.metricsPort = boundPort(opsApp);
  origins.settle(originsOf(bound));
  core.sweeper.start(config.sweepIntervalSeconds * 1000);
  if (config.webhookDelivery) core.deliverer?.start(WEBHOOK_TICK_MS);
  core.requests.start();

  let closing: Promise<void> | null = null;
  return {
    config: bound,
    core,
    accounts,
    firstRunApiKey,
    close() {
      closing ??= (async () => {
        // Readiness fails first, so a load balancer stops sending before the listeners close.
        draining = true;
        // Event streams never finish on their own: end them, so the listeners can close.
        core.eventHub.close();
        // close() drops the keep-alive connections that are idle at that moment; one whose last
        // response was still being written turns idle a moment later and would hold the listener
        // open until the keep-alive timeout (72 s). Keep dropping idle ones until all are closed,
        // and finish the connections Node does not call idle but that have nothing left to answer.
        const idle = setInterval(() => {
          for (const a of apps) a.server.closeIdleConnections();
          drain.finishUnused();
        }, 50);
        await Promise.allSettled(apps.map((a) => a.close()));
        clearInterval(idle);
        await opsApp?.close();
        await runtime.close();
      })();
      return closing;
    },
  };
}

/** A listener that could not bind its port: the message names it and the setting that moves it. */
export class ListenError extends Error {}

const PORT_SETTING = {
  API: ['CAIRN_API_PORT', '--api-port'],
  viewer: ['CAIRN_VIEWER_PORT', '--viewer-port'],
  content: ['CAIRN_CONTENT_PORT', '--content-port'],
  metrics: ['CAIRN_METRICS_PORT', null],
} as const;

async function listenAs(app: FastifyInstance, name: keyof typeof PORT_SETTING, host: string, port: number) {
  try {
    await app.listen({ host, port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw err;
    const [env, flag] = PORT_SETTING[name];
    const why = code === 'EADDRINUSE' ? 'another program is listening there' : 'permission denied';
    throw new ListenError(
      `the ${name} listener cannot use port ${port} on ${host}: ${why}. Stop that program or choose another ` +
        `port with ${env}${flag ? ` (or ${flag})` : ''}.`,
    );
  }
}
