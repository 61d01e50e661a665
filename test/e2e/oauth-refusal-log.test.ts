import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkcePair, registerClient, tokenRequest, WebUser } from '../helpers/hosted.js';
import { type ServeProcess, spawnServe } from '../helpers/process.js';

/**
 * Refused OAuth requests are ordinary traffic that anyone can send: the real `cairn serve` (built
 * dist/, log level info) is sent every kind of refusal the authorization server has, and its own
 * log (pino, on stderr) must hold nothing above info for them and no stack trace, so that no one
 * can fill the operators' logs or trip their alerts with them.
 */

let dataDir: string;
let serve: ServeProcess;
const REDIRECT = 'http://127.0.0.1:9/callback';

const get = (url: string) =>
  fetch(url, { redirect: 'manual' }).then(async (r) => ({ status: r.status, text: await r.text() }));

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-oauth-log-'));
  serve = await spawnServe(dataDir, { CAIRN_LOG_LEVEL: 'info' });
});

afterAll(async () => {
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('refused OAuth requests', () => {
  it('are answered as refusals', async () => {
    const api = serve.apiUrl;
    const client = await registerClient(api, [REDIRECT]);
    const { challenge } = pkcePair();
    const good = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
    };
    const authorize = (p: Record<string, string>) => get(`${api}/oauth/authorize?${new URLSearchParams(p)}`);
    // Refusals shown as an error page.
    expect((await authorize({ ...good, client_id: 'nope' })).status).toBe(400);
    expect((await authorize({ ...good, redirect_uri: 'https://evil.example/cb' })).status).toBe(400);
    expect((await get(`${api}/oauth/authorize`)).status).toBe(400);
    // Refusals sent back to the client's redirect URI.
    const refusedByRedirect: Record<string, string>[] = [
      { response_type: 'token' },
      { scope: 'admin' },
      { code_challenge: '' },
      { code_challenge_method: 'plain' },
      { resource: 'https://elsewhere.example/mcp' },
    ];
    for (const bad of refusedByRedirect) {
      const r = await fetch(`${api}/oauth/authorize?${new URLSearchParams({ ...good, ...bad })}`, {
        redirect: 'manual',
      });
      expect(r.status, JSON.stringify(bad)).toBe(302);
      expect(new URL(r.headers.get('location') ?? '').searchParams.get('error')).toBeTruthy();
    }
    // The consent form posted with a bad client, and with a stale CSRF token.
    const user = new WebUser(api);
    await user.signUp(`log-${Date.now()}@example.com`);
    const post = await user.request('POST', '/oauth/authorize', { ...good, client_id: 'nope', csrf: 'x' });
    expect(post.status).toBe(403);
    // The JSON endpoints' refusals.
    expect((await tokenRequest(api, { grant_type: 'authorization_code', code: 'nope' })).status).toBe(400);
    expect((await tokenRequest(api, { grant_type: 'password' })).status).toBe(400);
    const reg = await fetch(`${api}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://evil.example/cb'] }),
    });
    expect(reg.status).toBe(400);
  });

  it('log nothing above info, and no stack trace', async () => {
    await serve.stop();
    const log: { level: number; msg?: string }[] = serve
      .stderr()
      .split('\n')
      // The logger's lines (the shutdown notes are plain text).
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    // The log was read: the listeners' start lines are there.
    expect(log.filter((l) => l.msg?.startsWith('Server listening')).length).toBe(3);
    expect(log.filter((l) => l.level > 30)).toEqual([]);
    expect(serve.stderr()).not.toMatch(/stack|TypeError/);
  });
});
