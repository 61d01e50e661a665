import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { BIN } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { REPORT, SESSION } from './script.js';

/**
 * What every framework recipe test shares: a real Cairn, the `cairn mcp` command the recipe
 * spawns (the built bin/cairn.js, with the key in its environment and a temp HOME), a net for
 * warnings, and the check that the agent's report landed and its page serves it.
 */

export interface Cairn {
  srv: TestServer;
  /** `{command, args, env}` for the recipe: how a framework starts `cairn mcp`. */
  stdio: { command: string; args: string[]; env: Record<string, string> };
  close(): Promise<void>;
}

export async function startCairn(): Promise<Cairn> {
  const srv = await startTestServer();
  const home = await mkdtemp(path.join(tmpdir(), 'cairn-integration-'));
  return {
    srv,
    stdio: {
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: { CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl, HOME: home, PATH: process.env.PATH ?? '' },
    },
    async close() {
      await srv.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * Collects what a framework says while it loads and runs: console.warn/error (where they log
 * schema-conversion and deprecation warnings), process warnings, and anything else `extra` hooks.
 */
export function catchWarnings() {
  const seen: string[] = [];
  const warn = console.warn;
  const error = console.error;
  const text = (args: unknown[]) => args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ');
  console.warn = (...args: unknown[]) => seen.push(`console.warn: ${text(args)}`);
  console.error = (...args: unknown[]) => seen.push(`console.error: ${text(args)}`);
  const onWarning = (w: Error) => seen.push(`process warning: ${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  return {
    seen,
    push: (s: string) => seen.push(s),
    restore() {
      console.warn = warn;
      console.error = error;
      process.off('warning', onWarning);
    },
  };
}

/** The agent's report is stored as it wrote it, in its session, and its page serves it. */
export async function expectReportShared(srv: TestServer, answer: string): Promise<void> {
  const list = await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts?session_id=${SESSION}`);
  expect(list.status).toBe(200);
  expect(list.json.artifacts).toHaveLength(1);
  const record = list.json.artifacts[0];
  expect(record).toMatchObject({ filename: REPORT.filename, metadata: { type: 'report', model: 'scripted-model' } });
  const signed = await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts/${record.artifact_id}/download-url`);
  expect(await (await fetch(signed.json.download_url)).text()).toBe(REPORT.text);
  const one = await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts/${record.artifact_id}`);
  const url: string = one.json.page?.public_url;
  expect(url, JSON.stringify(one.json)).toMatch(/^http/);
  // The agent's last answer carries the page URL it got back through the framework's loop.
  expect(answer).toContain(url);
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('Weekly report');
}
