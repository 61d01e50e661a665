import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/**
 * The floor of the `cairn mcp` start-up row: a minimal stdio MCP server on the same MCP SDK, one
 * tool registered, as an MCP host would start any server.
 */
const server = new McpServer({ name: 'bare', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echo the text back.', inputSchema: { text: z.string() } },
  async ({ text }) => ({
    content: [{ type: 'text', text }],
  }),
);
await server.connect(new StdioServerTransport());
