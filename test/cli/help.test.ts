import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_MODULES } from '../../src/cli/main.js';
import { cliWorkspace, expectOk } from '../helpers/cli.js';

/**
 * `--help` of every command, found by walking `cairn --help` down the command tree (so a new
 * command is covered without touching this file), and bad flags. No server is needed: neither
 * reaches one.
 */

let ws: Awaited<ReturnType<typeof cliWorkspace>>;
const cairn = (args: string[]) => ws.run(args, { CAIRN_API_KEY: 'ak_live_unused' });

/** The subcommand names listed under "Commands:" in a help text. */
function subcommands(help: string): string[] {
  const block = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...block.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((name) => name !== 'help');
}

beforeAll(async () => {
  // Nothing listens on port 9: a command that wrongly reached a server would fail loudly.
  ws = await cliWorkspace('http://127.0.0.1:9');
});
afterAll(async () => ws?.remove());

describe('--help', { timeout: 300_000 }, () => {
  it('every command, down to the admin subcommands, has usage, options and examples', async () => {
    const seen: string[] = [];
    const walk = async (path: string[]) => {
      const r = expectOk(await cairn([...path, '--help']));
      const where = ['cairn', ...path].join(' ');
      seen.push(where);
      expect(r.stdout, where).toMatch(new RegExp(`^Usage: ${where}`));
      expect(r.stdout, where).toMatch(/^Options:$/m);
      expect(r.stdout, where).toMatch(/^Examples:\n {2}\$ cairn /m);
      // The examples run the command they document.
      const examples = r.stdout.split(/^Examples:$/m)[1]!;
      expect(examples, where).toContain(`$ ${path.length > 0 ? where : 'cairn'}`);
      expect(r.stderr).toBe('');
      // Off a terminal help is laid out for 80 columns: no line of it, ours or commander's, is wider.
      for (const line of r.stdout.split('\n')) expect(line.length, `${where}: ${line}`).toBeLessThanOrEqual(80);
      for (const sub of subcommands(r.stdout)) await walk([...path, sub]);
    };
    await walk([]);
    for (const expected of [
      'cairn serve',
      'cairn admin tenant create',
      'cairn admin key revoke',
      'cairn admin page unpublish',
      'cairn admin sweep',
      'cairn push',
      'cairn publish',
      'cairn login',
      'cairn mcp',
    ]) {
      expect(seen).toContain(expected);
    }
    expect(seen.length).toBeGreaterThanOrEqual(30);
  });

  it('client commands document the shared options', async () => {
    const r = expectOk(await cairn(['ls', '--help']));
    for (const flag of ['--json', '--api-key <key>', '--api-url <url>', '--profile <name>']) {
      expect(r.stdout).toContain(flag);
    }
    expect(expectOk(await cairn(['publish', '--help'])).stdout).toMatch(/replaces the page's title and access/);
    expect(expectOk(await cairn(['push', '--help'])).stdout).toMatch(/one\s+JSON record is printed per line/);
    expect(expectOk(await cairn(['--help'])).stdout).toMatch(/Exit codes: 0 ok, 1 API or runtime error, 2 usage error/);
  });
});

describe('the command index', () => {
  it('names exactly the words each module defines, each word once', async () => {
    const words: string[] = [];
    for (const entry of COMMAND_MODULES) {
      const program = new Command();
      (await entry.load())(program);
      expect(program.commands.map((c) => c.name())).toEqual(entry.words);
      words.push(...entry.words);
    }
    expect(new Set(words).size).toBe(words.length);
  });
});

describe('bad flags and arguments', { timeout: 120_000 }, () => {
  it('exit 2 with a message saying what is wrong, and print nothing on stdout', async () => {
    const cases: [string[], RegExp][] = [
      [['ls', '--bogus'], /unknown option '--bogus'/],
      [['ls', '--sesion', 'x'], /unknown option '--sesion'\n\(Did you mean --session\?\)/],
      [['pussh', 'x'], /unknown command 'pussh'\n\(Did you mean push\?\)/],
      [['get'], /missing required argument 'id'/],
      [['get', 'a', 'b'], /too many arguments for 'get'/],
      [['ls', '--limit'], /option '--limit <n>' argument missing/],
      [['ls', '--limit', '500'], /1 to 200/],
      [['link', 'art_X', '--expires', '1 week'], /Use a duration like 7d/],
      [['publish', 'art_X', '--visibility', 'private'], /'unlisted' or 'public'/],
      [['sessions', '--created-after', 'someday'], /ISO date/],
      [['admin', 'tenant', 'create'], /missing required argument 'name'/],
      [['serve', '--nope'], /unknown option '--nope'/],
    ];
    for (const [args, message] of cases) {
      const r = await cairn(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });
});
