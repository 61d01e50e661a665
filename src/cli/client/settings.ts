import { configPath, DEFAULT_PROFILE, nonEmpty, type Profile, readConfigFile } from './config-file.js';

/** Where the client commands find their key and URL. */

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** The options every client command takes. */
export interface GlobalOptions {
  apiKey?: string;
  apiUrl?: string;
  profile?: string;
  json?: boolean;
}

export interface Settings {
  apiKey: string | undefined;
  apiUrl: string;
  profile: string;
  /** The profile was named with --profile (so the environment's key and URL are not used). */
  profileFlag: boolean;
  configFile: string;
  /** What the config file holds for `profile` (empty when nothing). */
  stored: Profile;
  /** Where the key came from, for `whoami` and error hints: '--api-key', 'CAIRN_API_KEY', 'profile "x" in …'. */
  keySource: string | null;
  /** Where the URL came from: '--api-url', 'CAIRN_API_URL', 'profile "x" in …' or 'default'. */
  urlSource: string;
}

type Sourced = [value: string, source: string];

/**
 * A key and the URL it is sent to come from one place, so a key is never sent to a server that
 * another source named:
 *
 * 1. `--api-key` and `--api-url` win, each on its own.
 * 2. With `--profile NAME`: that profile's key and URL (the environment is not consulted).
 * 3. Else with a key on the command line: CAIRN_API_URL, else the default URL.
 * 4. Else with CAIRN_API_KEY (or the spec's SERVICE_API_KEY): that key, with CAIRN_API_URL or the default URL.
 * 5. Else the profile named by CAIRN_PROFILE, else "default": its key and its URL.
 */
export async function resolveSettings(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  const profileFlag = nonEmpty(opts.profile);
  const profile = profileFlag ?? nonEmpty(env.CAIRN_PROFILE) ?? DEFAULT_PROFILE;
  const configFile = configPath(env);
  const stored = (await readConfigFile(configFile)).profiles[profile] ?? {};

  const from = (value: string | undefined, source: string): Sourced | undefined =>
    value === undefined ? undefined : [value, source];
  const inProfile = `profile "${profile}" in ${configFile}`;
  const fromProfile = {
    key: from(nonEmpty(stored.api_key), inProfile),
    url: from(nonEmpty(stored.api_url), inProfile),
  };
  const envUrl = from(nonEmpty(env.CAIRN_API_URL), 'CAIRN_API_URL');
  const envKey =
    from(nonEmpty(env.CAIRN_API_KEY), 'CAIRN_API_KEY') ?? from(nonEmpty(env.SERVICE_API_KEY), 'SERVICE_API_KEY');
  const flagKey = from(nonEmpty(opts.apiKey), '--api-key');
  const flagUrl = from(nonEmpty(opts.apiUrl), '--api-url');

  let pair: { key?: Sourced; url?: Sourced };
  if (profileFlag) pair = fromProfile;
  else if (flagKey) pair = { url: envUrl };
  else if (envKey) pair = { key: envKey, url: envUrl };
  else pair = fromProfile;

  const key = flagKey ?? pair.key;
  const [apiUrl, urlSource] = flagUrl ?? pair.url ?? [DEFAULT_API_URL, 'default'];
  return {
    apiKey: key?.[0],
    apiUrl: apiUrl.replace(/\/+$/, ''),
    profile,
    profileFlag: profileFlag !== undefined,
    configFile,
    stored,
    keySource: key?.[1] ?? null,
    urlSource,
  };
}

/** The URL `cairn login` checks the key against and saves: its own flags first, then as for any command. */
export function loginUrl(
  opts: { url?: string; apiUrl?: string },
  settings: Settings,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const url =
    nonEmpty(opts.url) ??
    nonEmpty(opts.apiUrl) ??
    (settings.profileFlag ? undefined : nonEmpty(env.CAIRN_API_URL)) ??
    nonEmpty(settings.stored.api_url) ??
    DEFAULT_API_URL;
  return url.replace(/\/+$/, '');
}

/** "the default" or "from CAIRN_API_URL" (--api-url, a profile), for messages that show the URL. */
export function urlOrigin(settings: Pick<Settings, 'urlSource'>): string {
  return settings.urlSource === 'default' ? `the default` : `from ${settings.urlSource}`;
}

const FROM_ENVIRONMENT = new Set(['CAIRN_API_KEY', 'SERVICE_API_KEY']);

/**
 * When the key comes from the environment or --api-key while the profile holds a key or URL of its
 * own, what is not used and how to use it instead; else undefined. The precedence above is
 * deliberate (a key is never sent to a URL another source named), but it surprises whoever saved
 * a URL with `cairn login` and exported a key earlier: every message that shows the URL says so.
 */
export function overrideNote(settings: Settings): string | undefined {
  const { keySource, stored, profile, profileFlag, apiUrl } = settings;
  if (profileFlag || keySource === null || keySource.startsWith('profile ')) return undefined;
  const storedUrl = nonEmpty(stored.api_url)?.replace(/\/+$/, '');
  if (!nonEmpty(stored.api_key) && (storedUrl === undefined || storedUrl === apiUrl)) return undefined;
  const unused = storedUrl !== undefined && storedUrl !== apiUrl ? ` (and its URL ${storedUrl})` : '';
  const fix = FROM_ENVIRONMENT.has(keySource)
    ? `unset ${keySource} to use the profile, or set CAIRN_API_URL to go with the key`
    : 'drop --api-key to use the profile, or pass --api-url with it';
  return `the key comes from ${keySource}, so profile "${profile}"${unused} is not used: ${fix}.`;
}

export function missingKeyMessage(settings: Settings): string {
  if (settings.profileFlag) {
    return (
      `no API key in profile "${settings.profile}" of ${settings.configFile} ` +
      `(with --profile, CAIRN_API_KEY is not used). Run \`cairn login --profile ${settings.profile}\`, ` +
      'or pass --api-key.'
    );
  }
  return (
    'no API key. Set CAIRN_API_KEY, pass --api-key, or run `cairn login` ' +
    `to save one in ${settings.configFile} (profile "${settings.profile}").`
  );
}
