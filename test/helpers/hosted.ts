import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

/** Helpers for the hosted MCP endpoint, its OAuth server and the dashboard (no browser needed). */

export interface HttpMcp {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The SDK's Streamable HTTP client against `{api}/mcp`, with a bearer (an API key or an access token). */
export async function connectHttpMcp(apiUrl: string, bearer: string, clientName = 'hosted-test'): Promise<HttpMcp> {
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

/**
 * A raw JSON-RPC POST to /mcp (for what the SDK client hides: status codes and headers). Plain
 * node:http, because fetch will not send a Host header of our choosing.
 */
export function postMcp(
  apiUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${apiUrl}/mcp`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(payload)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: h, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export const initializeMessage = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** RFC 7591 registration; returns the response body (client_id…) after checking it is a 201. */
export async function registerClient(
  apiUrl: string,
  redirectUris: string[],
  name = 'Test Agent',
): Promise<{ client_id: string } & Record<string, unknown>> {
  const res = await fetch(`${apiUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  });
  const body = (await res.json()) as { client_id: string } & Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

/** POSTs a form to the token (or revoke) endpoint. */
export async function tokenRequest(
  apiUrl: string,
  form: Record<string, string>,
  path = '/oauth/token',
  // biome-ignore lint/suspicious/noExplicitAny: OAuth JSON, checked field by field by the tests
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${apiUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
}

/** The value of a hidden input in a page. */
export function hiddenField(page: string, name: string): string {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page);
  if (!m) throw new Error(`no hidden field ${name} in page`);
  return (m[1] ?? '').replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");
}

/**
 * A person using the dashboard through plain HTTP: a cookie jar, no redirects followed, so tests
 * can see every status and Location. The browser suite does the same in real Chromium.
 */
export class WebUser {
  private readonly jar = new Map<string, string>();

  constructor(readonly apiUrl: string) {}

  get cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    method: 'GET' | 'POST',
    path: string,
    form?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; text: string; location: string | null }> {
    const res = await fetch(path.startsWith('http') ? path : `${this.apiUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (/Max-Age=0/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  /** GETs a page that has a form, then posts `fields` with that form's CSRF token. */
  async submit(pagePath: string, action: string, fields: Record<string, string>) {
    const page = await this.request('GET', pagePath);
    return this.request('POST', action, { csrf: hiddenField(page.text, 'csrf'), ...fields });
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<void> {
    const r = await this.submit('/signup', '/signup', { email, password, next: '/dashboard' });
    expect(r.status, r.text).toBe(303);
  }

  async logIn(email: string, password = 'correct horse battery'): Promise<void> {
    const r = await this.submit('/login', '/login', { email, password, next: '/dashboard' });
    expect(r.status, r.text).toBe(303);
  }

  /**
   * Runs /oauth/authorize → consent (choosing `tier`) and returns the redirect the client gets.
   * The user must be signed in.
   */
  async authorize(params: Record<string, string>, tier: 'read' | 'write' | 'destroy'): Promise<URL> {
    const url = `/oauth/authorize?${new URLSearchParams(params)}`;
    const consent = await this.request('GET', url);
    expect(consent.status, consent.text).toBe(200);
    const fields: Record<string, string> = { csrf: hiddenField(consent.text, 'csrf'), tier, decision: 'approve' };
    for (const k of Object.keys(params)) fields[k] = hiddenField(consent.text, k);
    const done = await this.request('POST', '/oauth/authorize', fields);
    expect(done.status, done.text).toBe(303);
    return new URL(done.location ?? '');
  }
}

/** Everything up to a token pair: register, sign up, consent, exchange. */
export async function oauthTokens(
  apiUrl: string,
  user: WebUser,
  tier: 'read' | 'write' | 'destroy',
  redirectUri = 'http://127.0.0.1:9/callback',
) {
  const client = await registerClient(apiUrl, [redirectUri]);
  const { verifier, challenge } = pkcePair();
  const back = await user.authorize(
    {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: `${apiUrl}/mcp`,
    },
    tier,
  );
  const code = back.searchParams.get('code') ?? '';
  const r = await tokenRequest(apiUrl, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: client.client_id,
    redirect_uri: redirectUri,
    resource: `${apiUrl}/mcp`,
  });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return { clientId: client.client_id, access: r.json.access_token as string, refresh: r.json.refresh_token as string };
}

export interface McpSubscriber extends HttpMcp {
  transport: StreamableHTTPClientTransport;
  /** Resolves once the client's GET /mcp stream is answered (200: its position in the feed is fixed), with its status. */
  streamOpened: Promise<number>;
  /** The next `notifications/resources/updated` URI, or throws after `ms`. */
  nextUpdate(ms?: number): Promise<string>;
}

/**
 * The SDK's Streamable HTTP client, subscribed-to-be: it initializes (getting an Mcp-Session-Id)
 * and opens its GET stream by itself. With `streamApiUrl`, its GETs go to that server instead
 * (another instance of a scale-out set, as a balancer without stickiness would send them).
 */
export async function connectMcpSubscriber(
  apiUrl: string,
  bearer: string,
  streamApiUrl = apiUrl,
): Promise<McpSubscriber> {
  let opened: (status: number) => void = () => {};
  const streamOpened = new Promise<number>((resolve) => {
    opened = resolve;
  });
  const routed: typeof fetch = async (input, init) => {
    if (init?.method !== 'GET') return fetch(input, init);
    const res = await fetch(new URL('/mcp', streamApiUrl), init);
    opened(res.status);
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    fetch: routed,
  });
  const client = new Client({ name: 'subscriber', version: '1.0.0' });
  const updates: string[] = [];
  const waiting: ((uri: string) => void)[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    const next = waiting.shift();
    if (next) next(n.params.uri);
    else updates.push(n.params.uri);
  });
  await client.connect(transport);
  return {
    client,
    transport,
    streamOpened,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
    nextUpdate: (ms = 5000) => {
      const queued = updates.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(got), 1);
          reject(new Error(`no notifications/resources/updated within ${ms} ms`));
        }, ms);
        const got = (uri: string) => {
          clearTimeout(timer);
          resolve(uri);
        };
        waiting.push(got);
      });
    },
  };
}
