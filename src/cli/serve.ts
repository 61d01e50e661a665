import type { Command } from 'commander';
import type { Config } from '../config.js';
import { fitted } from './help.js';
import { serveBanner } from './serve-banner.js';
import { stderrLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

/** How long in-flight requests may take to finish once a stop signal arrives. */
const SHUTDOWN_GRACE_MS = 30_000;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('Run the Cairn service: API, viewer and content listeners on one machine, data in a local folder.')
    .option('--data <dir>', 'data folder (env CAIRN_DATA_DIR, default ./data)')
    .option('--host <host>', 'interface to bind (env CAIRN_HOST, default 127.0.0.1)')
    .option('--api-port <port>', 'API port (env CAIRN_API_PORT, default 8080)')
    .option('--viewer-port <port>', 'viewer port (env CAIRN_VIEWER_PORT, default 8081)')
    .option('--content-port <port>', 'content port (env CAIRN_CONTENT_PORT, default 8082)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|silent (env CAIRN_LOG_LEVEL, default info)')
    .addHelpText(
      'after',
      fitted(
        `
Examples:
  $ cairn serve                          # ./data, ports 8080/8081/8082
  $ cairn serve --data /var/lib/cairn --api-port 9000
  $ CAIRN_DATA_DIR=/tmp/cairn cairn serve

On the first start of an empty data folder a tenant "default" is created and its API key is
printed once. SIGINT/SIGTERM stop the service after in-flight requests finish.`,
      ),
    )
    .action(async (opts: Record<string, string | undefined>) => {
      // Loaded here, not at the top: this module defines the command for `cairn --help` too.
      const [{ ConfigError, loadConfig }, { ListenError, startServer }] = await Promise.all([
        import('../config.js'),
        import('../server.js'),
      ]);
      let config: Config;
      try {
        config = loadConfig(
          {
            dataDir: opts.data,
            host: opts.host,
            apiPort: opts.apiPort,
            viewerPort: opts.viewerPort,
            contentPort: opts.contentPort,
            logLevel: opts.logLevel,
          },
          process.env,
        );
      } catch (err) {
        if (err instanceof ConfigError) throw new UsageError(err.message);
        throw err;
      }
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        server = await startServer(config, { env: process.env });
      } catch (err) {
        if (!(err instanceof ListenError)) throw err;
        stderrLine(`error: ${err.message}`);
        process.exitCode = 1;
        return;
      }
      // Signal handlers first, banner second: whoever waits for the banner may stop us at once.
      const stopped = new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          console.error(`\n${signal} received: finishing in-flight requests… (send it again to stop at once)`);
          // A second signal, or requests still running after the grace period, end the process anyway.
          const force = () => process.exit(1);
          process.once('SIGINT', force);
          process.once('SIGTERM', force);
          setTimeout(force, SHUTDOWN_GRACE_MS).unref();
          server.close().then(resolve, (err: unknown) => {
            console.error(err);
            resolve();
          });
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
      printBanner(server.config, server.firstRunApiKey);
      await stopped;
      console.error('Cairn stopped.');
    });
}

function printBanner(config: Config, apiKey: string | null): void {
  console.log(serveBanner(config, apiKey));
}
