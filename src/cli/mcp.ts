import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { resolveSettings, type Settings } from './client/settings.js';
import { fitted } from './help.js';
import { stderrLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

interface McpOptions {
  allowPath: string[];
  allowDestructive?: boolean;
  profile?: string;
}

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Run the local MCP server over stdio (for Claude Desktop, Claude Code, Cursor, …).')
    // startMcpDirectly parses the same three.
    .option(
      '--allow-path <dirs>',
      "extra absolute root for `path` uploads; repeatable, ':'-separated (env CAIRN_MCP_ALLOW_PATH)",
      (value: string, prev: string[]) => [...prev, value],
      [] as string[],
    )
    .option(
      '--profile <name>',
      'use this config-file profile\'s key and URL, not CAIRN_API_KEY/CAIRN_API_URL (else CAIRN_PROFILE, or "default")',
    )
    .option(
      '--allow-destructive',
      'offer create_download_link, delete_artifact and seal_session to hosts that cannot confirm them',
    )
    .addHelpText(
      'after',
      fitted(
        `
Key and URL, as for every client command: CAIRN_API_KEY (or SERVICE_API_KEY) with CAIRN_API_URL,
else the profile saved by \`cairn login\` (CAIRN_PROFILE or --profile names it, else "default").

Environment:
  CAIRN_API_KEY (or SERVICE_API_KEY)   the API key (else the saved profile's)
  CAIRN_API_URL                        the URL that goes with it (default http://127.0.0.1:8080)
  CAIRN_MCP_ALLOW_PATH                 extra ':'-separated absolute roots for path uploads

Examples:
  $ cairn mcp                              # key: CAIRN_API_KEY or \`cairn login\`
  $ CAIRN_API_KEY=ak_live_… cairn mcp --allow-path /data/reports
  $ cairn mcp --allow-destructive          # for hosts that cannot confirm

stdout carries MCP messages only; diagnostics and the audit lines of destructive calls go to stderr.
See docs/mcp.md for host configuration, path confinement and destructive-tool gating.`,
      ),
    )
    .action(runMcp);
}

async function runMcp(opts: McpOptions): Promise<void> {
  // Loaded on use (the MCP SDK would otherwise slow every other command's start), and begun
  // before the settings are read, which then cost the host no wait.
  const loading = import('../mcp/stdio.js');
  loading.catch(() => {}); // awaited below unless the settings fail first
  const settings = await resolveSettings({ profile: opts.profile });
  if (!settings.apiKey || !settings.keySource) throw new UsageError(noKeyMessage(settings));
  const { McpStartupError, runStdioServer } = await loading;
  try {
    await runStdioServer({
      apiKey: settings.apiKey,
      apiUrl: settings.apiUrl,
      keySource: settings.keySource,
      allowPath: opts.allowPath,
      allowDestructive: opts.allowDestructive === true,
    });
  } catch (err) {
    if (err instanceof McpStartupError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * `cairn mcp` with plain options (the way MCP hosts start it, once per conversation), run
 * without loading commander, a tenth of the server's start; the exit code, or null when the
 * arguments are anything else (`--help`, an option this parse does not know, a mistake to
 * explain): the full CLI then handles them, with commander's messages.
 */
export async function startMcpDirectly(args: string[]): Promise<number | null> {
  // As CommonJS: an ESM import of node:util reads its every export, which loads worker_threads and
  // the assertion differ, a sixth of a bare Node's start for one function.
  const { parseArgs } = createRequire(import.meta.url)('node:util') as typeof import('node:util');
  let opts: McpOptions;
  try {
    const { values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        'allow-path': { type: 'string', multiple: true },
        profile: { type: 'string' },
        'allow-destructive': { type: 'boolean' },
      },
    });
    opts = {
      allowPath: values['allow-path'] ?? [],
      ...(values.profile === undefined ? {} : { profile: values.profile }),
      ...(values['allow-destructive'] ? { allowDestructive: true } : {}),
    };
  } catch {
    return null;
  }
  try {
    await runMcp(opts);
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    stderrLine(`error: ${err.message}`);
    return 2;
  }
}

/** Like the client commands' message, without --api-key: a key on a command line ends up in host config files. */
function noKeyMessage(settings: Settings): string {
  if (settings.profileFlag) {
    return `cairn mcp: no API key in profile "${settings.profile}" of ${settings.configFile}. Run \`cairn login --profile ${settings.profile}\`.`;
  }
  return (
    'cairn mcp: no API key. Run `cairn login` (it saves the key in ' +
    `${settings.configFile}, profile "${settings.profile}"), or set CAIRN_API_KEY in the host's environment.`
  );
}
