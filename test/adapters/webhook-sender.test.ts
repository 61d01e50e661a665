import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpWebhookSender, type Resolve } from '../../src/adapters/webhook-sender/http-webhook-sender.js';

/**
 * The webhook sender's SSRF refusal and bounds, against real HTTP servers on loopback. Refusal is
 * decided after resolving the name and again at every redirect; names resolve through a resolver
 * given here (a table standing in for DNS: public names cannot be served from a test machine),
 * besides the machine's own `localhost`.
 */

let target: http.Server;
let targetUrl: string;
let hits = 0;
const servers: http.Server[] = [];

async function serve(handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  targetUrl = await serve((req, res) => {
    hits++;
    req.resume();
    res.end('ok');
  });
  target = servers[0]!;
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const port = () => (target.address() as AddressInfo).port;
const table: Record<string, string[]> = {
  'public.test': ['93.184.216.34'],
  'evil.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'rebind.test': ['93.184.216.34', '127.0.0.1'],
  'v6.test': ['::1'],
  'mapped.test': ['::ffff:127.0.0.1'],
};
const resolve: Resolve = async (host) => {
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  const found = table[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const strict = (over: Partial<ConstructorParameters<typeof HttpWebhookSender>[0]> = {}) =>
  new HttpWebhookSender({
    allowPrivate: false,
    timeoutMs: 2000,
    maxResponseBytes: 1024,
    maxRedirects: 3,
    resolve,
    ...over,
  });

describe('SSRF refusal', () => {
  it.each([
    ['loopback', () => `http://127.0.0.1:${port()}/`],
    ['loopback, another of 127/8', () => `http://127.0.0.2:${port()}/`],
    ['localhost', () => `http://localhost:${port()}/`],
    ['IPv6 loopback', () => `http://[::1]:${port()}/`],
    ['IPv4-mapped IPv6', () => `http://[::ffff:127.0.0.1]:${port()}/`],
    ['IPv4-mapped IPv6, hex', () => `http://[::ffff:7f00:1]:${port()}/`],
    ['unspecified', () => `http://0.0.0.0:${port()}/`],
    ['private 10/8', () => 'http://10.0.0.1/'],
    ['private 192.168/16', () => 'http://192.168.0.10/'],
    ['link-local metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['IPv6 unique local', () => 'http://[fd00::1]/'],
    ['IPv6 link-local', () => 'http://[fe80::1]/'],
    ['a name resolving to a private address', () => 'http://evil.test/'],
    ['a name resolving to link-local', () => 'http://metadata.test/'],
    ['a name with one private address among public ones', () => `http://rebind.test:${port()}/`],
    ['a name resolving to IPv6 loopback', () => `http://v6.test:${port()}/`],
    ['a name resolving to mapped loopback', () => `http://mapped.test:${port()}/`],
  ])('refuses %s without connecting', async (_what, url) => {
    const before = hits;
    const out = await strict().send(url(), {}, '{}');
    expect(out.status).toBeNull();
    expect(out.error).toMatch(/refused|private/);
    expect(hits).toBe(before);
  });

  it.each([
    'http://evil.test/',
    'http://localhost/',
    'http://[::1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://10.0.0.1/',
  ])('checks every redirect: refuses one to %s', async (location) => {
    // This redirector stands for a public receiver: the policy admits 127.0.0.1 under the name
    // 127.0.0.1 only (a public address cannot be served from a test machine), and nothing else.
    const redirector = await serve((req, res) => {
      req.resume();
      res.writeHead(req.url === '/' ? 307 : 200, { location: req.url === '/' ? location : '' }).end();
    });
    const sender = new HttpWebhookSender({
      allowPrivate: false,
      timeoutMs: 2000,
      maxResponseBytes: 1024,
      maxRedirects: 3,
      resolve,
      isAllowed: (address, host) => host === '127.0.0.1' && address === '127.0.0.1',
    });
    const before = hits;
    const out = await sender.send(`${redirector}/`, {}, '{}');
    expect(out.status).toBeNull();
    expect(out.error).toMatch(/refused/);
    expect(hits).toBe(before);
  });

  it('follows 307/308 redirects, each checked, when they stay allowed', async () => {
    const redirector = await serve((req, res) => {
      req.resume();
      res
        .writeHead(req.url === '/twice' ? 308 : 307, { location: req.url === '/twice' ? '/once' : `${targetUrl}/` })
        .end();
    });
    const open = new HttpWebhookSender({
      allowPrivate: true,
      timeoutMs: 2000,
      maxResponseBytes: 1024,
      maxRedirects: 3,
      resolve,
    });
    const before = hits;
    expect(await open.send(`${redirector}/twice`, {}, '{}')).toMatchObject({ status: 200, error: null });
    expect(hits).toBe(before + 1);
  });
});

describe('bounds', () => {
  const open = (over = {}) =>
    new HttpWebhookSender({
      allowPrivate: true,
      timeoutMs: 500,
      maxResponseBytes: 1024,
      maxRedirects: 3,
      resolve,
      ...over,
    });

  it('gives up on a receiver that does not answer in time', async () => {
    const slow = await serve((req) => {
      req.resume();
    });
    const started = Date.now();
    const out = await open().send(`${slow}/`, {}, '{}');
    expect(out.status).toBeNull();
    expect(out.error).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('reads at most the response bound of an endless answer', async () => {
    const endless = await serve((req, res) => {
      req.resume();
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 97);
      const pump = () => {
        while (res.write(chunk)) {}
      };
      res.on('drain', pump);
      pump();
    });
    const out = await open({ timeoutMs: 5000 }).send(`${endless}/`, {}, '{}');
    expect(out).toMatchObject({ status: 200, error: null });
    expect(out.durationMs).toBeLessThan(2000);
  });

  it('does not follow a 302 (a POST must not turn into a GET), nor redirects without end', async () => {
    const found = await serve((req, res) => {
      req.resume();
      res.writeHead(302, { location: '/' }).end();
    });
    expect(await open().send(`${found}/`, {}, '{}')).toMatchObject({ status: 302, error: 'HTTP 302' });
    const loop = await serve((req, res) => {
      req.resume();
      res.writeHead(307, { location: '/' }).end();
    });
    expect(await open().send(`${loop}/`, {}, '{}')).toMatchObject({ status: 307, error: 'too many redirects' });
  });
});
