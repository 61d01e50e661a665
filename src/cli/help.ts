import type { Command } from 'commander';

/**
 * The widest a help text's own lines are: commander wraps its option lists to the terminal, and
 * the texts added here (paragraphs, examples, tables) are fitted to the same width, at most 80
 * columns, so no terminal breaks a word or a flag (`--ti` / `tle`).
 */
export function helpWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return Math.min(80, stream.isTTY && stream.columns ? stream.columns : 80);
}

/**
 * A help text fitted to `width`: a paragraph (lines not indented, up to a blank line) is reflowed;
 * an indented line in two columns (an example and its comment, a variable and what it does) that
 * is too long keeps its first column and wraps the second under itself; any other indented line
 * is kept as written.
 */
export function fitHelpText(text: string, width = helpWidth()): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(...wrapWords(paragraph.join(' '), width, ''));
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      flush();
      out.push('');
    } else if (/^\s/.test(line)) {
      flush();
      out.push(...fitIndented(line, width));
    } else {
      paragraph.push(line.trim());
    }
  }
  flush();
  return out.join('\n');
}

function fitIndented(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const columns = /^(\s+\S.*?\s{2,})(\S.*)$/.exec(line);
  if (!columns?.[1] || !columns[2] || columns[1].length > width / 2) return [line];
  const [first, ...rest] = wrapWords(columns[2], width - columns[1].length, '');
  return [columns[1] + (first ?? ''), ...rest.map((l) => ' '.repeat(columns[1]?.length ?? 0) + l)];
}

function wrapWords(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else {
      line = line === '' ? indent + word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** For `addHelpText('after', fitted(text))`: the text fitted to the terminal when --help shows it. */
export const fitted = (text: string) => () => fitHelpText(text);

/** Appends an "Examples:" block to a command's --help (every command has one). */
export function withExamples(cmd: Command, examples: string[]): Command {
  return cmd.addHelpText('after', fitted(`\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`));
}
