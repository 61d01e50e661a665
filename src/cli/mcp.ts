import type { Command } from 'commander';
import { UsageError } from './usage-error.js';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Run the local MCP server over stdio (for Claude Desktop, Claude Code, Cursor, …).')
    .option(
      '--allow-path <dirs>',
      "extra absolute root for `path` uploads; repeatable, ':'-separated (env CAIRN_MCP_ALLOW_PATH)",
      (value: string, prev: string[]) => [...prev, value],
      [] as string[],
    )
    .option(
      '--allow-destructive',
      'offer create_download_link, delete_artifact and seal_session to hosts that cannot confirm them',
    )
    .addHelpText(
      'after',
      `
Environment:
  CAIRN_API_KEY (or SERVICE_API_KEY)   the API key (required)
  CAIRN_API_URL                        default http://127.0.0.1:8080
  CAIRN_MCP_ALLOW_PATH                 extra ':'-separated absolute roots for path uploads

Examples:
  $ cairn mcp                                              # key from CAIRN_API_KEY
  $ CAIRN_API_KEY=ak_live_… cairn mcp --allow-path /data/reports
  $ cairn mcp --allow-destructive                          # for hosts that cannot confirm

stdout carries MCP messages only; diagnostics and the audit lines of destructive calls go to stderr.
See docs/mcp.md for host configuration, path confinement and destructive-tool gating.`,
    )
    .action(async (opts: { allowPath: string[]; allowDestructive?: boolean }) => {
      // Loaded on use: the MCP SDK would otherwise slow every other command's start.
      const { McpStartupError, runStdioServer } = await import('../mcp/stdio.js');
      try {
        await runStdioServer({ allowPath: opts.allowPath, allowDestructive: opts.allowDestructive === true });
      } catch (err) {
        if (err instanceof McpStartupError) throw new UsageError(err.message);
        throw err;
      }
    });
}
