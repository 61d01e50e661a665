import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { put } from '../helpers/e2e.js';
import { BIN, childEnv } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * MCP resource subscriptions on the local server (`cairn mcp`), driven by the MCP SDK's own
 * client: a subscribed session resource is reported updated when an upload made through the
 * REST API lands in it, and when the session is sealed; nothing is reported for another session
 * or after unsubscribing.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

describe('resources/subscribe', () => {
  it('notifies a subscribed session of an upload through the REST API, and of its seal', async () => {
    const key = await s.createTenant('subscriber');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: childEnv({ CAIRN_API_KEY: key, CAIRN_API_URL: s.apiUrl }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'subscribe-test', version: '1.0.0' });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      await client.subscribeResource({ uri: 'cairn://session/run-42' });
      const { tenant } = await s.core.tenants.authenticate(key);
      const deadline = Date.now() + 5000;
      while (s.core.eventHub.open(tenant.id) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 25));
      await put(s.apiUrl, key, 'elsewhere', { session_id: 'run-7' });
      const rec = await put(s.apiUrl, key, 'landed', { session_id: 'run-42' });
      const until = async (n: number) => {
        const end = Date.now() + 5000;
        while (updated.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
      };
      await until(1);
      expect(updated).toEqual(['cairn://session/run-42']);
      // The view the notification points at now shows the new artifact.
      const view = await client.readResource({ uri: 'cairn://session/run-42' });
      expect(JSON.stringify(view)).toContain(rec.artifact_id);
      await s.core.sessions.seal(await s.core.tenants.authenticate(key), 'run-42');
      await until(2);
      expect(updated).toEqual(['cairn://session/run-42', 'cairn://session/run-42']);
      await client.unsubscribeResource({ uri: 'cairn://session/run-42' });
      // A change that touches the session (its artifact deleted), now unheard.
      await s.core.artifacts.softDelete(await s.core.tenants.authenticate(key), rec.artifact_id);
      await new Promise((r) => setTimeout(r, 700));
      expect(updated).toHaveLength(2);
    } finally {
      await client.close();
    }
  });
});
