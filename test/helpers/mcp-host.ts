import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';

/**
 * Starts `cairn mcp` as an MCP host would from its config (command, args, env) and checks that it
 * serves Cairn's tools with a working key: `store_artifact` is listed and `whoami` succeeds.
 */
export async function expectHostStartsCairn(params: StdioServerParameters, hostName = 'test-host'): Promise<void> {
  const transport = new StdioClientTransport({ ...params, stderr: 'pipe' });
  const client = new Client({ name: hostName, version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('store_artifact');
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    expect(who.isError, JSON.stringify(who)).toBeFalsy();
  } finally {
    await client.close();
  }
}
