import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { BIN } from '../helpers/process.js';
import { endToEndHeaders } from '../helpers/proxy-headers.js';

/** A real MCP client talking to a real `node bin/cairn.js mcp` child (dist/ must be built). */
export interface McpSession {
  client: Client;
  stderr(): string;
  /** Errors the client saw on the stream (a non-protocol line on stdout would show up here). */
  streamErrors: Error[];
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export async function connectMcp(opts: {
  env: Record<string, string>;
  args?: string[];
  cwd: string;
  confirmations?: boolean;
  /** Declares the standard `elicitation` capability and answers each elicitation/create with this. */
  elicitation?: (request: ElicitRequest['params']) => ElicitResult | Promise<ElicitResult>;
  clientName?: string;
}): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...(opts.args ?? [])],
    env: opts.env,
    cwd: opts.cwd,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const client = new Client(
    { name: opts.clientName ?? 'test-agent', version: '1.0.0' },
    {
      capabilities: {
        ...(opts.confirmations ? { experimental: { confirmations: {} } } : {}),
        ...(opts.elicitation ? { elicitation: {} } : {}),
      },
    },
  );
  const answer = opts.elicitation;
  if (answer) client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params));
  const streamErrors: Error[] = [];
  client.onerror = (e) => streamErrors.push(e);
  await client.connect(transport);
  return {
    client,
    stderr: () => err,
    streamErrors,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

/** The structured result of a successful call (fails the test on an error result). */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON, checked field by field by the tests
export function data(result: CallToolResult): any {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result)}`);
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  // The text copy and the structured copy carry the same JSON.
  if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(result.structuredContent)) {
    throw new Error('text and structuredContent differ');
  }
  return result.structuredContent;
}

/** Runs `cairn mcp` that is expected to exit at startup; returns its code and stderr. */
export function runMcpExpectingExit(
  env: Record<string, string>,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'mcp', ...args], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/**
 * How the proxy fails the request it was told to: `refuse` answers 500 without forwarding it,
 * `after` forwards it, lets the API act on it, and answers 500 instead of the API's answer, and
 * `drop` cuts the connection as soon as the request arrives (a server that died mid-request).
 */
export type ProxyFailure = 'refuse' | 'after' | 'drop';

/**
 * A forwarding proxy in front of the API that fails the next request (or `times` requests)
 * matching `failNext`, then forwards everything; `seen` records every request as "METHOD /path".
 */
export async function startFlakyProxy(target: string) {
  const seen: string[] = [];
  let failing: { match: (method: string, path: string) => boolean; how: ProxyFailure; left: number } | null = null;
  const injected500 = (res: http.ServerResponse) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'server_error', message: 'Injected failure.', status: 500 } }));
  };
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? '').split('?')[0] ?? '';
    seen.push(`${req.method} ${pathname}`);
    const failure = failing?.match(req.method ?? '', pathname) ? failing.how : null;
    if (failing && failure && --failing.left === 0) failing = null;
    if (failure === 'drop') {
      req.socket.destroy();
      return;
    }
    if (failure === 'refuse') {
      req.resume();
      injected500(res);
      return;
    }
    const url = new URL(req.url ?? '/', target);
    const upstream = http.request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (up) => {
      if (failure === 'after') {
        // The API has done its work; the client never hears about it.
        up.resume();
        up.on('end', () => injected500(res));
        return;
      }
      res.writeHead(up.statusCode ?? 502, endToEndHeaders(up.headers));
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    // A client that goes away mid-body (it had its answer early, e.g. an idempotent replay) must
    // not leave a half-sent request open on the API, as a load balancer would not either.
    req.on('close', () => {
      if (!req.complete) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    failNext(match: (method: string, path: string) => boolean, how: ProxyFailure = 'refuse', times = 1) {
      failing = { match, how, left: times };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
