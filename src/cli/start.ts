/**
 * What `bin/cairn.js` runs: the command line's exit code. Two ways in skip the full command line
 * (commander and the command index), because they are started far more often than typed:
 * `cairn --version` (scripts, MCP hosts checking the install) and `cairn mcp` with plain options
 * (MCP hosts, once per conversation). Everything else, and anything unusual about those two
 * (`--help`, a mistake), goes through `main`.
 */
export async function start(argv: string[]): Promise<number> {
  endQuietlyWhenTheReaderStops();
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    // The version alone, not the SDK's internal index (which loads its transcript scanner and fs).
    const { CAIRN_VERSION } = await import('cairn-store-sdk/version');
    process.stdout.write(`${CAIRN_VERSION}\n`);
    return 0;
  }
  if (args[0] === 'mcp') {
    const code = await (await import('./mcp.js')).startMcpDirectly(args.slice(1));
    if (code !== null) return code;
  }
  return (await import('./main.js')).main(argv);
}

/**
 * A reader that stops early (`cairn ls | head -1`, `cairn --help | head`) closes the pipe, and the
 * next write fails with EPIPE: end then, quietly, as other command-line tools do, rather than with
 * Node's unhandled 'error' stack trace. The output nobody reads is not an error of the command.
 */
function endQuietlyWhenTheReaderStops(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
}
