import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { CairnClient } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_SERVER_VERSION } from '../../src/mcp/server.js';
import { BIN } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * One version: package.json's is the CLI's --version, the OpenAPI document's info.version, the
 * TypeScript SDK's User-Agent and the Python package's; the MCP server keeps its own 1.x line,
 * and docs/api.md says how the two relate.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
let srv: TestServer;
let version: string;

beforeAll(async () => {
  srv = await startTestServer();
  version = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version;
});
afterAll(async () => {
  await srv?.close();
});

describe('one version', () => {
  it('the OpenAPI info.version, cairn --version and the SDK User-Agent are the package version', async () => {
    const doc = await new CairnClient({ apiKey: srv.apiKey, baseUrl: srv.apiUrl }).openapi();
    expect((doc.info as { version: string }).version).toBe(version);
    const cli = await run(process.execPath, [BIN, '--version']);
    expect(cli.stdout.trim()).toBe(version);
    // The User-Agent as a server sees it.
    let agent = '';
    const echo = http.createServer((req, res) => {
      agent = req.headers['user-agent'] ?? '';
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const port = (echo.address() as AddressInfo).port;
      await new CairnClient({ apiKey: 'ak_live_x', baseUrl: `http://127.0.0.1:${port}` }).health();
    } finally {
      echo.close();
    }
    expect(agent).toMatch(new RegExp(`^cairn-sdk-typescript/${version.replace(/\./g, '\\.')} `));
  });

  it('the SDK package has that version, and cairn-store depends on exactly it', async () => {
    const root = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    const sdk = JSON.parse(await readFile(path.join(ROOT, 'packages/sdk/package.json'), 'utf8'));
    expect(sdk.version).toBe(version);
    expect(root.dependencies['cairn-store-sdk']).toBe(version);
  });

  it('the Python package says the same; the MCP line is 1.x and the docs give both', async () => {
    const pyproject = await readFile(path.join(ROOT, 'python/pyproject.toml'), 'utf8');
    expect(/^version = "([^"]+)"/m.exec(pyproject)?.[1]).toBe(version);
    const init = await readFile(path.join(ROOT, 'python/cairn/__init__.py'), 'utf8');
    expect(/^__version__ = "([^"]+)"/m.exec(init)?.[1]).toBe(version);
    expect(MCP_SERVER_VERSION).toMatch(/^1\.\d+\.\d+$/);
    const doc = await readFile(path.join(ROOT, 'docs/api.md'), 'utf8');
    expect(doc).toContain('`info.version`');
    expect(doc).toContain(`MCP server ${MCP_SERVER_VERSION}`);
  });
});
