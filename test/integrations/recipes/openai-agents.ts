import { Agent, MCPServerStdio, type Model, run } from '@openai/agents';

type Stdio = { command: string; args: string[]; env?: Record<string, string> };

/** An OpenAI Agents SDK agent with Cairn's tools: it stores a report and shares it as a web page. */
export async function storeAndShare(model: Model | string, cairn: Stdio = { command: 'cairn', args: ['mcp'] }) {
  const server = new MCPServerStdio({ name: 'cairn', ...cairn });
  await server.connect();
  try {
    const agent = new Agent({
      name: 'Reporter',
      instructions: 'Store what you write in Cairn; share a file as a web page when asked.',
      model,
      mcpServers: [server],
    });
    const result = await run(
      agent,
      'Write a one-line weekly report, store it in Cairn as report.md and share it as a web page.',
    );
    return result.finalOutput ?? '';
  } finally {
    await server.close();
  }
}
