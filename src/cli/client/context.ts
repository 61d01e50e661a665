import { CairnClient, CairnError } from 'cairn-store-sdk';
import { type Command, CommanderError } from 'commander';
import { withExamples } from '../help.js';
import { stderrLine, stdoutLine, visible } from '../terminal-text.js';
import { UsageError } from '../usage-error.js';
import { colourEnabled, type Paint, painter } from './format.js';
import { printJsonFailure } from './json-failure.js';
import {
  type GlobalOptions,
  missingKeyMessage,
  overrideNote,
  resolveSettings,
  type Settings,
  urlOrigin,
} from './settings.js';

/** What a client command's action gets: the SDK client, the settings, and output helpers. */
export interface Ctx {
  client: CairnClient;
  settings: Settings;
  json: boolean;
  paint: Paint;
  /** A line on stdout. */
  print(text: string): void;
  /** The API body, as-is, on stdout. */
  printJson(value: unknown): void;
  /** A remark for the person (hints, "more results"): stderr, so stdout stays parseable. */
  note(text: string): void;
}

export const USER_AGENT = 'cairn-cli';

/** Adds the options every client command takes, then the examples shown by --help. */
export function withClientOptions(cmd: Command, examples: string[]): Command {
  const withOptions = cmd
    .option('--json', 'print the API response body as JSON')
    .option('--api-key <key>', "API key (else CAIRN_API_KEY, SERVICE_API_KEY, then the profile's)")
    .option(
      '--api-url <url>',
      "API URL (else the one that goes with the key: CAIRN_API_URL or the profile's; default http://127.0.0.1:8080)",
    )
    .option(
      '--profile <name>',
      'use this config-file profile\'s key and URL, not CAIRN_API_KEY/CAIRN_API_URL (else CAIRN_PROFILE, or "default")',
    );
  return withExamples(withOptions, examples);
}

export function makeOutput(json: boolean): Pick<Ctx, 'json' | 'paint' | 'print' | 'printJson' | 'note'> {
  return {
    json,
    paint: painter(!json && colourEnabled(process.stdout)),
    print: stdoutLine,
    printJson: (value) => stdoutLine(JSON.stringify(value, null, 2)),
    note: stderrLine,
  };
}

export function makeClient(apiKey: string, apiUrl: string): CairnClient {
  return new CairnClient({ apiKey, baseUrl: apiUrl, userAgent: USER_AGENT });
}

type Handler = (ctx: Ctx, args: unknown[], opts: Record<string, unknown>) => Promise<void>;

/**
 * Wraps an action: resolves key and URL (a missing key is a usage error, exit 2), builds the
 * client, and turns API failures into `error: <code>: <message>` with exit code 1.
 */
export function clientAction(handler: Handler, { needsKey = true } = {}) {
  return async (...params: unknown[]): Promise<void> => {
    const cmd = params.at(-1) as Command;
    const opts = cmd.opts() as Record<string, unknown> & GlobalOptions;
    const args = params.slice(0, -2);
    const settings = await resolveSettings(opts);
    if (needsKey && !settings.apiKey) throw new UsageError(missingKeyMessage(settings));
    let client: CairnClient | undefined;
    const ctx: Ctx = {
      // Built on first use: `login` runs before there is any key to build it with.
      get client() {
        client ??= makeClient(settings.apiKey ?? '', settings.apiUrl);
        return client;
      },
      settings,
      ...makeOutput(opts.json === true),
    };
    try {
      await handler(ctx, args, opts);
    } catch (err) {
      if (ctx.json && !(err instanceof UsageError || err instanceof CommanderError)) printJsonFailure(err);
      else reportFailure(err, settings);
      process.exitCode = 1;
    }
  };
}

/** Prints a failure on stderr; usage errors and commander's own go back up to main (exit 2). */
export function reportFailure(err: unknown, settings: Settings): void {
  if (err instanceof UsageError || err instanceof CommanderError) throw err;
  if (err instanceof CairnError) {
    const lines = [`error: ${err.code}: ${withoutRestPaths(err.message)}`];
    if (err.upgradeUrl) lines.push(`upgrade: ${err.upgradeUrl}`);
    if (err.retryAfter !== null && err.code === 'rate_limited') lines.push(`retry after ${err.retryAfter} s`);
    const override = overrideNote(settings);
    if (err.code === 'network_error') {
      lines.push(
        `hint: is Cairn running at ${settings.apiUrl}? That URL is ${urlOrigin(settings)} (--api-url to use another).`,
      );
      if (override) lines.push(`note: ${override}`);
    }
    if (err.code === 'unauthorized' && /suspended/i.test(err.message)) {
      lines.push('hint: the key is valid, but its account is suspended; ask the Cairn operator to lift it.');
    } else if (err.code === 'unauthorized' && settings.keySource) {
      lines.push(
        `hint: the key from ${settings.keySource} was refused at ${settings.apiUrl} (revoked, or another server's). ` +
          'Keys are made in the dashboard or with `cairn admin key create <tenant>`; save one with `cairn login`.',
      );
      if (override) lines.push(`note: ${override}`);
    }
    if (
      err.code === 'artifact_not_found' ||
      (err.code === 'invalid_request' && /is not an artifact id/.test(err.message))
    ) {
      lines.push('hint: find artifact ids with `cairn ls` (e.g. `cairn ls --filename report.md`).');
    }
    // One line each, whatever the message quotes.
    stderrLine(lines.map(visible).join('\n'));
    return;
  }
  if (err instanceof Error) {
    stderrLine(`error: ${visible(err.message)}`);
    return;
  }
  throw err;
}

/**
 * The API's message without the sentences that point at REST calls ("Find artifact ids by listing
 * them: GET /v1/artifacts …"): the CLI's hint names the command that does it instead.
 */
function withoutRestPaths(message: string): string {
  const sentences = message.split(/(?<=\.)\s+(?=[A-Z])/);
  const kept = sentences.filter((s) => !/\b(GET|POST|PUT|PATCH|DELETE|HEAD) \/v1\//.test(s));
  return kept.length > 0 ? kept.join(' ') : message;
}
