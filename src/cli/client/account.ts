import readline from 'node:readline';
import type { Command } from 'commander';
import { UsageError } from '../usage-error.js';
import { nonEmpty, saveProfile } from './config-file.js';
import { clientAction, makeClient, withClientOptions } from './context.js';
import { whoamiView } from './render.js';
import { DEFAULT_API_URL, loginUrl, overrideNote, urlOrigin } from './settings.js';

/** whoami and login. */
export function registerAccountCommands(program: Command): void {
  withClientOptions(program.command('whoami').description('Check the key and show the tenant, plan and usage.'), [
    'cairn whoami',
    'cairn whoami --profile work',
    'CAIRN_API_KEY=ak_live_… cairn whoami --json',
  ]).action(
    clientAction(async (ctx) => {
      const who = await ctx.client.whoami();
      if (ctx.json) return ctx.printJson(who);
      ctx.print(
        whoamiView(
          who,
          [
            ['API URL', `${ctx.settings.apiUrl} (${urlOrigin(ctx.settings)})`],
            ['Key from', ctx.settings.keySource ?? '-'],
            ...noteRow(overrideNote(ctx.settings)),
          ],
          ctx.paint,
        ),
      );
    }),
  );

  withClientOptions(
    program
      .command('login')
      .description('Check an API key with the server and save it, with the URL, in a profile of the config file.')
      .option('--key <key>', 'the API key (default: prompt, or read from piped stdin)')
      .option('--url <url>', 'the API URL to save (same as --api-url; else CAIRN_API_URL, the profile, the default)'),
    [
      'cairn login                                   # prompts for the key',
      'cairn login --key ak_live_… --url https://cairn.example.com',
      'cairn login --profile work --key ak_live_…',
      'echo "$KEY" | cairn login --profile ci',
    ],
  ).action(
    clientAction(
      async (ctx, _args, opts) => {
        const apiUrl = loginUrl(opts, ctx.settings);
        const apiKey =
          nonEmpty(opts.key as string | undefined) ??
          nonEmpty(opts.apiKey as string | undefined) ??
          (await askForKey());
        if (!apiKey) throw new UsageError('no key given: pass --key, or type or pipe it in.');
        // Save only a key the server accepts: a typo fails here, not on the next command.
        const who = await makeClient(apiKey, apiUrl).whoami();
        await saveProfile(ctx.settings.configFile, ctx.settings.profile, { api_key: apiKey, api_url: apiUrl });
        const overriding = environmentOverride(ctx.settings, { key: apiKey, url: apiUrl });
        if (overriding) ctx.note(`warning: ${overriding}`);
        if (ctx.json) return ctx.printJson(who);
        ctx.print(
          `Logged in to ${apiUrl} as tenant ${ctx.paint('bold', who.tenant_name)} (${who.plan}, key …${who.api_key_last_4}).`,
        );
        ctx.print(`Saved to ${ctx.settings.configFile} (profile "${ctx.settings.profile}").`);
      },
      { needsKey: false },
    ),
  );
}

const noteRow = (note: string | undefined): [string, string][] => (note ? [['Note', note]] : []);

/**
 * What will override the profile `login` just saved on the next command: CAIRN_API_KEY (or
 * SERVICE_API_KEY) wins over any profile not named with --profile, and takes CAIRN_API_URL or the
 * default URL with it.
 */
function environmentOverride(
  settings: { profileFlag: boolean; profile: string },
  saved: { key: string; url: string },
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (settings.profileFlag) return undefined;
  const variable = ['CAIRN_API_KEY', 'SERVICE_API_KEY'].find((v) => nonEmpty(env[v]) !== undefined);
  if (!variable) return undefined;
  const url = (nonEmpty(env.CAIRN_API_URL) ?? DEFAULT_API_URL).replace(/\/+$/, '');
  // The same key to the same server: nothing is overridden.
  if (nonEmpty(env[variable]) === saved.key && url === saved.url) return undefined;
  const savedUrl = saved.url;
  const where =
    url === savedUrl
      ? ''
      : ` and send it to ${url}${nonEmpty(env.CAIRN_API_URL) ? ' (CAIRN_API_URL)' : ' (the default URL)'}`;
  return (
    `${variable} is set, so other commands use that key${where}, not profile "${settings.profile}". ` +
    `Run \`unset ${variable}\` to use the saved profile (or pass --profile ${settings.profile}).`
  );
}

/** Prompts without echo on a terminal; otherwise reads the first line piped in. */
async function askForKey(): Promise<string | undefined> {
  if (!process.stdin.isTTY) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    return nonEmpty(text.split(/\r?\n/).find((line) => line.trim() !== ''));
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  process.stderr.write('API key (input hidden): ');
  // readline echoes through this method; silencing it keeps the key off the screen.
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => {};
  try {
    const answer = await new Promise<string>((resolve) => rl.question('', resolve));
    return nonEmpty(answer);
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}
