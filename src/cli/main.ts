import { CAIRN_VERSION } from 'cairn-store-sdk/internal';
import { Command, CommanderError } from 'commander';
import { registerClientCommands } from './client/index.js';
import { printJsonUsageError } from './client/json-failure.js';
import { withExamples } from './help.js';
import { forTerminal, stderrLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

/** Exit codes: 0 ok, 1 API or runtime error, 2 usage error. */
export async function main(argv: string[]): Promise<number> {
  const json = wantsJson(argv);
  const program = new Command('cairn')
    .description(
      'Cairn: an artifact store for AI agents. Push files with metadata, find them, share them, publish them.',
    )
    .version(CAIRN_VERSION, '-V, --version')
    .showHelpAfterError(json ? false : '(run with --help for usage)')
    .exitOverride()
    // Commander echoes arguments in its errors: through the same escaping as all other output.
    .configureOutput({
      writeOut: (text) => process.stdout.write(forTerminal(text)),
      writeErr: (text) => process.stderr.write(forTerminal(text)),
      // Under --json a usage mistake is the error envelope too (admin commands print their own).
      outputError: (text, write) => (json ? printJsonUsageError(text) : write(text)),
    });
  withExamples(program, [
    'cairn serve                                   # run the service on ./data',
    'cairn login --url http://127.0.0.1:8080       # save a key in ~/.config/cairn/config.json',
    'cairn push report.md --session run-42 --meta model=gpt-5',
    'cairn ls --session run-42',
    'cairn publish art_XXXXXXXXXXXXXXXX --title "Report"',
    'cairn admin tenant create acme --plan pro',
    'cairn help push                               # options and examples of one command',
  ]).addHelpText(
    'after',
    '\nExit codes: 0 ok, 1 API or runtime error, 2 usage error. Every client command takes --json.\nMore in docs/cli.md.',
  );
  if (isClientCommand(argv)) {
    registerClientCommands(program);
  } else {
    // serve and admin load the whole server (about a second of start-up): only when they may run.
    const [{ registerServeCommand }, { registerAdminCommands }, { registerMcpCommand }] = await Promise.all([
      import('./serve.js'),
      import('./admin.js'),
      import('./mcp.js'),
    ]);
    registerServeCommand(program);
    registerAdminCommands(program);
    registerClientCommands(program);
    registerMcpCommand(program);
  }
  try {
    await program.parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return 0;
      return 2;
    }
    if (err instanceof UsageError) {
      if (json) printJsonUsageError(err.message);
      else stderrLine(`error: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

/** Whether `--json` is among the options (before a `--`). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).slice(2).includes('--json');
}

/** Whether the command word of `argv` (node, script, …) is one of the client commands. */
function isClientCommand(argv: string[]): boolean {
  const word = argv.slice(2).find((a) => !a.startsWith('-'));
  if (word === undefined) return false;
  const probe = new Command();
  registerClientCommands(probe);
  return probe.commands.some((c) => c.name() === word);
}
