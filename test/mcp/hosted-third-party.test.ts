import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endToEndHeaders } from '../helpers/proxy-headers.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { CONFORMANCE_CLI, INSPECTOR_CLI, runNodeScript } from '../helpers/third-party-mcp.js';
import { ALL_TOOLS } from './tool-counts.js';

/** Real third-party clients against the hosted endpoint: the MCP Inspector CLI and the official conformance suite. */

/** Each case starts one or two Node processes; on a busy two-core machine that takes a while. */
const SLOW = { timeout: 120_000 };

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.close();
});

/**
 * The conformance suite's client sends no credentials. This loopback proxy adds the tenant's API
 * key to every request and passes everything else through unchanged, Host and Origin included,
 * so the DNS-rebinding scenario's forged headers still reach Cairn (and a rejection can only come
 * from Cairn's own Host/Origin check, not from a missing key).
 */
async function startKeyProxy(target: string, key: string) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', target);
    const headers = { ...req.headers, authorization: `Bearer ${key}` };
    const upstream = http.request(url, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, endToEndHeaders(up.headers));
      up.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('MCP Inspector CLI over HTTP', () => {
  /** `mcp-inspector --cli <url> --transport http --header …`, with the tenant's key unless told otherwise. */
  const inspector = (args: string[], header = `Authorization: Bearer ${srv.apiKey}`) =>
    runNodeScript([INSPECTOR_CLI, '--cli', `${srv.apiUrl}/mcp`, '--transport', 'http', '--header', header, ...args]);

  it('lists the tools with a bearer header', SLOW, async () => {
    const r = await inspector(['--method', 'tools/list']);
    expect(r.code, r.stderr).toBe(0);
    const names = (JSON.parse(r.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toHaveLength(ALL_TOOLS);
    expect(names).toContain('store_artifact');
  });

  it('calls whoami and store_artifact', SLOW, async () => {
    const who = await inspector(['--method', 'tools/call', '--tool-name', 'whoami']);
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout).structuredContent.tenant_name).toBe('main');
    const stored = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'store_artifact',
      '--tool-arg',
      'filename=inspector.txt',
      `content=${Buffer.from('from the inspector').toString('base64')}`,
    ]);
    expect(stored.code, stored.stderr).toBe(0);
    const id = JSON.parse(stored.stdout).structuredContent.artifact_id as string;
    expect((await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts/${id}`)).json.filename).toBe('inspector.txt');
  });

  it('fails without the key (401), as the endpoint requires', SLOW, async () => {
    const r = await inspector(['--method', 'tools/list'], 'X-Probe: no-key');
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/401|nauthorized/);
  });
});

describe('official MCP conformance suite, server scenarios', () => {
  let proxy: Awaited<ReturnType<typeof startKeyProxy>>;
  beforeAll(async () => {
    proxy = await startKeyProxy(srv.apiUrl, srv.apiKey);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection']) {
    it(scenario, SLOW, async () => {
      const r = await runNodeScript([CONFORMANCE_CLI, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario]);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout + r.stderr).not.toMatch(/FAILURE/);
    });
  }
});
