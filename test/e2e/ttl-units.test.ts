import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS, type PlanName } from '../../src/core/plans.js';
import { type ApiResult, expectError, uploadJson, uploadMultipart } from '../helpers/e2e.js';
import { connectHttpMcp, type HttpMcp } from '../helpers/hosted.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, type McpSession } from '../mcp/mcp-client.js';

/**
 * A TTL is a count of one unit (s, m, h, d), and every form of one duration gets the same answer:
 * the plan's maximum (90 days Free, 365 days Pro) written in each unit is accepted, one unit more
 * is `ttl_exceeds_plan_limit`, on every path that takes a TTL (REST JSON and multipart, the hosted
 * MCP endpoint on the core, the stdio MCP server through the REST API).
 */

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

let srv: TestServer;
let keys: Record<PlanName, string>;
let hosted: Record<PlanName, HttpMcp>;
let stdio: Record<PlanName, McpSession>;
let cwd: string;

beforeAll(async () => {
  srv = await startTestServer();
  keys = {
    free: await srv.createTenant('ttl-units-free', 'free'),
    pro: await srv.createTenant('ttl-units-pro', 'pro'),
  };
  hosted = { free: await connectHttpMcp(srv.apiUrl, keys.free), pro: await connectHttpMcp(srv.apiUrl, keys.pro) };
  cwd = await mkdtemp(path.join(tmpdir(), 'cairn-ttl-units-'));
  const local = (key: string) => connectMcp({ env: { HOME: cwd, CAIRN_API_KEY: key, CAIRN_API_URL: srv.apiUrl }, cwd });
  stdio = { free: await local(keys.free), pro: await local(keys.pro) };
});
afterAll(async () => {
  for (const m of [...Object.values(hosted ?? {}), ...Object.values(stdio ?? {})]) await m.close();
  await srv?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** How long an accepted upload lives, in ms, or the refusal's error code. */
type Outcome = number | string;

function restOutcome(r: ApiResult): Outcome {
  if (r.status === 201) return Date.parse(r.json.expires_at) - Date.parse(r.json.created_at);
  expectError(r, r.status, r.json?.error?.code);
  return r.json.error.code;
}

function mcpOutcome(r: CallToolResult): Outcome {
  if (!r.isError) {
    const rec = r.structuredContent as { expires_at: string; created_at: string };
    return Date.parse(rec.expires_at) - Date.parse(rec.created_at);
  }
  return String((r._meta as { code?: string } | undefined)?.code ?? JSON.stringify(r.content));
}

const content = Buffer.from('ttl').toString('base64');
const paths: Record<string, (plan: PlanName, ttl: string) => Promise<Outcome>> = {
  'REST JSON': async (plan, ttl) =>
    restOutcome(await uploadJson(srv.apiUrl, keys[plan], { filename: 't.txt', content, ttl })),
  'REST multipart': async (plan, ttl) =>
    restOutcome(await uploadMultipart(srv.apiUrl, keys[plan], { content: 'ttl', before: { ttl } })),
  'hosted MCP': async (plan, ttl) =>
    mcpOutcome(await hosted[plan].call('store_artifact', { filename: 't.txt', content, ttl })),
  'stdio MCP': async (plan, ttl) =>
    mcpOutcome(await stdio[plan].call('store_artifact', { filename: 't.txt', content, ttl })),
};

describe.each(Object.keys(paths))('%s', (via) => {
  it.each(['free', 'pro'] as const)(
    '%s: the plan maximum in every unit is accepted, one unit more is refused',
    async (plan) => {
      const maxSeconds = PLANS[plan].maxTtlSeconds;
      const outcomes: Record<string, Outcome> = {};
      for (const [unit, seconds] of Object.entries(UNITS)) {
        const count = maxSeconds / seconds;
        outcomes[`${count}${unit}`] = await paths[via]!(plan, `${count}${unit}`);
        outcomes[`${count + 1}${unit}`] = await paths[via]!(plan, `${count + 1}${unit}`);
      }
      const expected: Record<string, Outcome> = {};
      for (const [unit, seconds] of Object.entries(UNITS)) {
        const count = maxSeconds / seconds;
        expected[`${count}${unit}`] = maxSeconds * 1000;
        expected[`${count + 1}${unit}`] = 'ttl_exceeds_plan_limit';
      }
      expect(outcomes).toEqual(expected);
    },
  );
});

describe('durations beyond any plan', () => {
  it('are ttl_exceeds_plan_limit however many digits they have, and the message stays short', async () => {
    for (const ttl of ['99999999999999999999s', `${'9'.repeat(400)}d`]) {
      const r = await uploadJson(srv.apiUrl, keys.pro, { filename: 't.txt', content, ttl });
      expectError(r, 400, 'ttl_exceeds_plan_limit');
      expect(r.json.error.message.length).toBeLessThan(200);
    }
  });
});
