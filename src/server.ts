import type { FastifyInstance } from 'fastify';
import { type Config, withBoundPorts } from './config.js';
import { type Accounts, createAccounts } from './core/accounts/index.js';
import type { Core } from './core/index.js';
import { buildApiApp } from './http/api/app.js';
import { ConnectionDrain } from './http/connection-drain.js';
import { buildContentApp } from './http/content/app.js';
import { hostedPlugin } from './http/hosted.js';
import { buildViewerApp } from './http/viewer/app.js';
import { createRuntime, originsOf, type RuntimeOptions } from './runtime.js';

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
  const runtime = await createRuntime(config, opts);
  const { core } = runtime;
  const appOpts = {
    logLevel: config.logLevel,
    trustProxy: config.trustProxy,
    bodyIdleTimeoutSeconds: config.uploadIdleTimeoutSeconds,
  };
  const accounts = createAccounts(core, runtime.adapters.accounts);
  const api = await buildApiApp(core, { ...appOpts, plugins: [hostedPlugin(accounts, config)] });
  const viewer = await buildViewerApp(core, appOpts);
  const content = await buildContentApp(core, appOpts);
  const apps = [api, viewer, content];
  const drain = new ConnectionDrain();
  for (const a of apps) drain.track(a);
  let firstRunApiKey: string | null;
  try {
    await api.listen({ host: config.host, port: config.apiPort });
    await viewer.listen({ host: config.host, port: config.viewerPort });
    await content.listen({ host: config.host, port: config.contentPort });
    // Only once all three ports are ours: the default key is printed once, so a start that fails
    // to bind (a busy port) must not create the tenant and lose its key with the process.
    firstRunApiKey = await core.tenants.ensureDefault();
  } catch (err) {
    await Promise.allSettled(apps.map((a) => a.close()));
    await runtime.close();
    throw err;
  }
  const bound = withBoundPorts(
    config,
    { api: boundPort(api), viewer: boundPort(viewer), content: boundPort(content) },
    opts.env ?? {},
  );
  // Origins are read per request, so filling them in after binding (port 0 in tests) is enough.
  Object.assign(core.deps.origins, originsOf(bound));
  core.sweeper.start(config.sweepIntervalSeconds * 1000);
  core.requests.start();

  let closing: Promise<void> | null = null;
  return {
    config: bound,
    core,
    accounts,
    firstRunApiKey,
    close() {
      closing ??= (async () => {
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
        await runtime.close();
      })();
      return closing;
    },
  };
}
