import type { Command } from 'commander';

/** Appends an "Examples:" block to a command's --help (every command has one). */
export function withExamples(cmd: Command, examples: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`);
}
