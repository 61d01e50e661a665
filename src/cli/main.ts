import { CAIRN_VERSION } from 'cairn-store-sdk/internal';
import { Command, CommanderError } from 'commander';
import { fitted, withExamples } from './help.js';
import { forTerminal, stderrLine } from './terminal-text.js';
import { printJsonUsageError, UsageError } from './usage-error.js';

type Register = (program: Command) => void;

/**
 * Every command word and the module that defines it, in the order `cairn --help` lists them. A
 * run loads only the module of its own word (`cairn ls` never loads the server, `cairn --version`
 * nothing at all); `cairn --help`, `cairn help` and an unknown word load every one, so the
 * listing and commander's "did you mean" see all commands. test/cli/help.test.ts checks that each
 * module defines exactly the words listed here.
 */
export const COMMAND_MODULES: { words: string[]; load: () => Promise<Register> }[] = [
  { words: ['serve'], load: async () => (await import('./serve.js')).registerServeCommand },
  { words: ['admin'], load: async () => (await import('./admin.js')).registerAdminCommands },
  { words: ['push'], load: async () => (await import('./client/push.js')).registerPushCommand },
  { words: ['ls', 'get', 'rm'], load: async () => (await import('./client/artifacts.js')).registerArtifactCommands },
  {
    words: ['download', 'download-url', 'link'],
    load: async () => (await import('./client/transfer.js')).registerTransferCommands,
  },
  { words: ['links', 'unlink'], load: async () => (await import('./client/links.js')).registerLinkCommands },
  { words: ['publish', 'unpublish'], load: async () => (await import('./client/pages.js')).registerPageCommands },
  { words: ['sessions', 'seal'], load: async () => (await import('./client/sessions.js')).registerSessionCommands },
  { words: ['whoami', 'login'], load: async () => (await import('./client/account.js')).registerAccountCommands },
  { words: ['watch'], load: async () => (await import('./client/watch.js')).registerWatchCommand },
  {
    words: ['capture'],
    load: async () => (await import('./client/capture-commands.js')).registerCaptureCommands,
  },
  { words: ['mcp'], load: async () => (await import('./mcp.js')).registerMcpCommand },
];

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
    'cairn login --url http://127.0.0.1:8080       # check a key, save it',
    'cairn push report.md --session run-42 --meta model=gpt-5',
    'cairn ls --session run-42',
    'cairn publish art_XXXXXXXXXXXXXXXX --title "Report"',
    'cairn admin tenant create acme --plan pro',
    'cairn help push                               # one command in full',
  ]).addHelpText(
    'after',
    fitted(
      '\nExit codes: 0 ok, 1 API or runtime error, 2 usage error. Every client command takes --json.\n\nMore in docs/cli.md.',
    ),
  );
  for (const register of await Promise.all(modulesFor(argv).map((m) => m.load()))) register(program);
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

/** The modules a run of `argv` (node, script, …) needs: its word's, none for the version, else all. */
function modulesFor(argv: string[]): typeof COMMAND_MODULES {
  const args = argv.slice(2);
  const words = args.filter((a) => !a.startsWith('-'));
  // `cairn help push` is `cairn push --help`.
  const word = words[0] === 'help' ? words[1] : words[0];
  if (word === undefined) return args.length > 0 && args.every(isVersionFlag) ? [] : COMMAND_MODULES;
  const own = COMMAND_MODULES.find((m) => m.words.includes(word));
  return own ? [own] : COMMAND_MODULES;
}

const isVersionFlag = (arg: string) => arg === '-V' || arg === '--version';

/** Whether `--json` is among the options (before a `--`). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).slice(2).includes('--json');
}
