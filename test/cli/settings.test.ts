import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '../client/proxy.js';
import { cliWorkspace, deadLoopbackUrl, expectOk, okJson } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * whoami, login, the config file and where the key and URL come from, through the real binary.
 * Two servers (`a`, `b`), each behind a proxy that records what reaches it, show which key went where:
 * a key only works on its own server, and a proxy that saw nothing was never sent a key.
 */

let a: TestServer;
let b: TestServer;
let viaA: FaultProxy;
let viaB: FaultProxy;
let keyA: string;
let keyB: string;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
/** A loopback URL with nothing listening (a port the OS handed out, then freed). */
let DEAD_URL: string;

/** `cairn` with exactly these variables (no CAIRN_API_URL unless given). */
const cairn = (args: string[], env: Record<string, string> = {}, input?: string) =>
  ws.run(args, { CAIRN_API_URL: '', ...env }, input);
const configFile = () => path.join(ws.configDir, 'config.json');
const writeConfig = (profiles: Record<string, { api_key?: string; api_url?: string }>) =>
  writeFile(configFile(), JSON.stringify({ profiles }), { mode: 0o600 });
const tenantOf = async (args: string[], env: Record<string, string> = {}) =>
  okJson(await cairn([...args, '--json'], env)).tenant_name as string;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
  keyA = await a.createTenant('alpha');
  keyB = await b.createTenant('bravo');
  viaA = await new FaultProxy(a.apiUrl).start();
  viaB = await new FaultProxy(b.apiUrl).start();
  ws = await cliWorkspace(viaA.url);
  DEAD_URL = await deadLoopbackUrl();
});
afterAll(async () => {
  await Promise.all([viaA?.close(), viaB?.close()]);
  await Promise.all([a?.close(), b?.close()]);
  await ws?.remove();
});
beforeEach(async () => {
  await ws.newConfig();
  viaA.next();
  viaB.next();
});

describe('whoami', { timeout: 120_000 }, () => {
  it('human: tenant, plan, usage, and where the key and URL came from; --json: the API body', async () => {
    const env = { CAIRN_API_KEY: keyA, CAIRN_API_URL: viaA.url };
    const human = expectOk(await cairn(['whoami'], env));
    expect(human.stdout).toMatch(/^Tenant\s+alpha$/m);
    expect(human.stdout).toMatch(/^Plan\s+pro$/m);
    expect(human.stdout).toMatch(new RegExp(`^API key\\s+…${keyA.slice(-4)}$`, 'm'));
    expect(human.stdout).toMatch(/^Storage\s+0 B of \S+ \S+ \(0%\)$/m);
    expect(human.stdout).toMatch(new RegExp(`^API URL\\s+${viaA.url} \\(from CAIRN_API_URL\\)$`, 'm'));
    expect(human.stdout).toMatch(/^Key from\s+CAIRN_API_KEY$/m);
    const body = okJson(await cairn(['whoami', '--json'], env));
    expect(body).toMatchObject({ tenant_name: 'alpha', plan: 'pro', api_key_last_4: keyA.slice(-4) });
    // The spec's eleven fields and four additive ones (what is left, the month's reset, the rate unit).
    expect(Object.keys(body)).toHaveLength(15);
    expect(human.stdout).toMatch(/^Requests\s+\d+ of 100,000 this month \(\d+%\), resets \d{4}-\d{2}-01$/m);
  });

  it('a refused key exits 1 and names where it came from', async () => {
    const r = await cairn(['whoami'], { CAIRN_API_KEY: keyB, CAIRN_API_URL: viaA.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: unauthorized: /);
    expect(r.stderr).toMatch(/the key from CAIRN_API_KEY was refused at /);
    // login saves a key, it does not make one: the hint says where keys are made.
    expect(r.stderr).toMatch(
      /Keys are made in the dashboard or with `cairn admin key create <tenant>`; save one with `cairn login`/,
    );
    expect(r.stderr).not.toMatch(/cairn login` for a new one/);
  });

  it('no key anywhere: exit 2, naming CAIRN_API_KEY and `cairn login`, and nothing is sent', async () => {
    for (const args of [['whoami'], ['ls', '--json'], ['push', 'nothing.txt']]) {
      const r = await cairn(args, { CAIRN_API_URL: viaA.url });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      // With --json the message is the error envelope's.
      const text = args.includes('--json') ? JSON.parse(r.stderr).error.message : r.stderr;
      expect(text).toContain('no API key. Set CAIRN_API_KEY, pass --api-key, or run `cairn login`');
      expect(text).toContain(`${configFile()} (profile "default")`);
    }
    const named = await cairn(['whoami', '--profile', 'ci'], { CAIRN_API_KEY: keyA });
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/no API key in profile "ci" .*CAIRN_API_KEY is not used.*`cairn login --profile ci`/);
    expect(viaA.seen).toEqual([]);
  });
});

describe('login and the config file', { timeout: 120_000 }, () => {
  it('checks the key, saves it with mode 0600 in a 0700 folder, and later commands use it', async () => {
    const human = expectOk(await cairn(['login', '--key', keyA, '--url', `${viaA.url}/`]));
    expect(human.stdout).toContain(`Logged in to ${viaA.url} as tenant alpha (pro, key …${keyA.slice(-4)}).`);
    expect(human.stdout).toContain(`Saved to ${configFile()} (profile "default").`);
    expect((await stat(configFile())).mode & 0o777).toBe(0o600);
    expect((await stat(ws.configDir)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(configFile(), 'utf8'))).toEqual({
      profiles: { default: { api_key: keyA, api_url: viaA.url } },
    });
    const who = expectOk(await cairn(['whoami']));
    expect(who.stdout).toMatch(/^Tenant\s+alpha$/m);
    expect(who.stdout).toMatch(new RegExp(`^Key from\\s+profile "default" in ${configFile()}$`, 'm'));
  });

  it('a folder it creates is 0700; --json prints whoami; a piped key works; profiles stay apart', async () => {
    const nested = path.join(ws.configDir, 'nested');
    const env = { CAIRN_CONFIG_DIR: nested };
    const body = okJson(await cairn(['login', '--profile', 'ci', '--url', viaB.url, '--json'], env, `${keyB}\n`));
    expect(body).toMatchObject({ tenant_name: 'bravo', api_key_last_4: keyB.slice(-4) });
    expect((await stat(nested)).mode & 0o777).toBe(0o700);
    const file = path.join(nested, 'config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expectOk(await cairn(['login', '--key', keyA, '--url', viaA.url], env));
    expect(JSON.parse(await readFile(file, 'utf8')).profiles).toEqual({
      ci: { api_key: keyB, api_url: viaB.url },
      default: { api_key: keyA, api_url: viaA.url },
    });
    expect(await tenantOf(['whoami'], env)).toBe('alpha');
    expect(await tenantOf(['whoami', '--profile', 'ci'], env)).toBe('bravo');
    expect(await tenantOf(['whoami'], { ...env, CAIRN_PROFILE: 'ci' })).toBe('bravo');
  });

  it('XDG_CONFIG_HOME/cairn/config.json when CAIRN_CONFIG_DIR is unset', async () => {
    const xdg = path.join(ws.configDir, 'xdg');
    expectOk(await cairn(['login', '--key', keyA, '--url', viaA.url], { CAIRN_CONFIG_DIR: '', XDG_CONFIG_HOME: xdg }));
    const file = path.join(xdg, 'cairn', 'config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).profiles.default.api_key).toBe(keyA);
  });

  it('a refused key is not saved (exit 1); no key at all is a usage error; bad JSON is named', async () => {
    const wrong = await cairn(['login', '--key', keyB, '--url', viaA.url]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^error: unauthorized: /);
    await expect(stat(configFile())).rejects.toMatchObject({ code: 'ENOENT' });
    const none = await cairn(['login', '--url', viaA.url], {}, '\n');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no key given/);
    await writeFile(configFile(), '{ not json');
    const broken = await cairn(['whoami']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`config file ${configFile()} is not valid JSON`);
  });
});

describe('where the key and URL come from', { timeout: 120_000 }, () => {
  it('key: --api-key > CAIRN_API_KEY > SERVICE_API_KEY > the profile', async () => {
    const b2 = await b.createTenant('bravo-2');
    const b3 = await b.createTenant('bravo-3');
    await writeConfig({ default: { api_key: keyB, api_url: viaB.url } });
    const url = { CAIRN_API_URL: viaB.url };
    expect(await tenantOf(['whoami'])).toBe('bravo');
    expect(await tenantOf(['whoami'], { ...url, SERVICE_API_KEY: b3 })).toBe('bravo-3');
    expect(await tenantOf(['whoami'], { ...url, SERVICE_API_KEY: b3, CAIRN_API_KEY: b2 })).toBe('bravo-2');
    expect(await tenantOf(['whoami', '--api-key', keyB], { ...url, SERVICE_API_KEY: b3, CAIRN_API_KEY: b2 })).toBe(
      'bravo',
    );
  });

  it('URL: --api-url > CAIRN_API_URL (with an environment key) > the default', async () => {
    expect(await tenantOf(['whoami', '--api-url', viaA.url], { CAIRN_API_KEY: keyA, CAIRN_API_URL: DEAD_URL })).toBe(
      'alpha',
    );
    expect(await tenantOf(['whoami'], { CAIRN_API_KEY: keyA, CAIRN_API_URL: viaA.url })).toBe('alpha');
    const dead = await cairn(['whoami'], { CAIRN_API_KEY: keyA, CAIRN_API_URL: DEAD_URL });
    expect(dead.code).toBe(1);
    expect(dead.stderr).toMatch(/^error: network_error: /);
    expect(dead.stderr).toContain(
      `is Cairn running at ${DEAD_URL}? That URL is from CAIRN_API_URL (--api-url to use another).`,
    );
    const human = expectOk(await cairn(['whoami', '--api-url', viaA.url], { CAIRN_API_KEY: keyA }));
    expect(human.stdout).toMatch(new RegExp(`^API URL\\s+${viaA.url} \\(from --api-url\\)$`, 'm'));
  });

  it('--profile picks that profile’s key AND URL, never the environment’s key', async () => {
    await writeConfig({ ci: { api_key: keyB, api_url: viaB.url } });
    const env = { CAIRN_API_KEY: keyA, CAIRN_API_URL: viaA.url };
    expect(await tenantOf(['whoami', '--profile', 'ci'], env)).toBe('bravo');
    expect(viaA.seen).toEqual([]);
    // Flags still win over the profile, one at a time.
    expect(await tenantOf(['whoami', '--profile', 'ci', '--api-url', viaA.url, '--api-key', keyA], env)).toBe('alpha');
    const keyOnly = await cairn(['whoami', '--profile', 'ci', '--api-key', keyA], env);
    expect(keyOnly.code).toBe(1);
    expect(keyOnly.stderr).toMatch(/^error: unauthorized: .*\n.*the key from --api-key was refused/);
  });

  it('an environment key beside a profile saved later: login warns, whoami and a connection error say why', async () => {
    // The README's tour exports a key; a later `login --url` saves a profile the key then overrides.
    const saved = await cairn(['login', '--key', keyA, '--url', viaA.url], { CAIRN_API_KEY: keyA, CAIRN_API_URL: '' });
    expectOk(saved);
    expect(saved.stderr).toMatch(
      /^warning: CAIRN_API_KEY is set, so other commands use that key and send it to http:\/\/127\.0\.0\.1:8080 \(the default URL\), not profile "default"\. Run `unset CAIRN_API_KEY` to use the saved profile/m,
    );
    // The warning is for people: --json keeps stdout the API body.
    const quiet = await cairn(['login', '--key', keyA, '--url', viaA.url, '--json'], { CAIRN_API_KEY: keyA });
    expect(JSON.parse(quiet.stdout).tenant_name).toBe('alpha');
    expect(quiet.stderr).toMatch(/^warning: CAIRN_API_KEY is set/);
    // No warning without the variable, or when it names the same key and URL, or with --profile.
    expect((await cairn(['login', '--key', keyA, '--url', viaA.url])).stderr).toBe('');
    const same = await cairn(['login', '--key', keyA, '--url', viaA.url], {
      CAIRN_API_KEY: keyA,
      CAIRN_API_URL: viaA.url,
    });
    expect(same.stderr).toBe('');
    const named = await cairn(['login', '--key', keyA, '--url', viaA.url, '--profile', 'x'], { CAIRN_API_KEY: keyA });
    expect(named.stderr).toBe('');

    // The environment's key goes to the default URL, not the profile's (nothing listens on DEAD_URL).
    const refused = await cairn(['ls'], { CAIRN_API_KEY: keyA, CAIRN_API_URL: DEAD_URL });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`hint: is Cairn running at ${DEAD_URL}? That URL is from CAIRN_API_URL`);
    expect(refused.stderr).toContain(
      `note: the key comes from CAIRN_API_KEY, so profile "default" (and its URL ${viaA.url}) is not used: unset CAIRN_API_KEY to use the profile`,
    );
    const who = expectOk(await cairn(['whoami'], { CAIRN_API_KEY: keyB, CAIRN_API_URL: viaB.url }));
    expect(who.stdout).toMatch(new RegExp(`API URL\\s+${viaB.url} \\(from CAIRN_API_URL\\)`));
    expect(who.stdout).toMatch(
      /Note\s+the key comes from CAIRN_API_KEY, so profile "default" \(and its URL \S+\) is not used/,
    );
    // The profile alone: no note.
    expect(expectOk(await cairn(['whoami'])).stdout).not.toMatch(/Note/);
  });

  it('an environment key never goes to a profile’s URL the user did not pick', async () => {
    await writeConfig({ default: { api_key: keyB, api_url: viaB.url } });
    // CAIRN_API_KEY without CAIRN_API_URL goes to the default URL (whatever listens there), not to b.
    const plain = await cairn(['whoami', '--json'], { CAIRN_API_KEY: keyA });
    expect(plain.stdout).not.toContain('bravo');
    // The same with a key on the command line, and with CAIRN_PROFILE naming the profile.
    await cairn(['whoami', '--api-key', keyA]);
    await cairn(['whoami'], { CAIRN_API_KEY: keyA, CAIRN_PROFILE: 'default' });
    expect(viaB.seen).toEqual([]);
    // The profile's own key still goes to the profile's URL.
    expect(await tenantOf(['whoami'])).toBe('bravo');
    expect(viaB.seen).toEqual(['GET /v1/whoami']);
  });
});
