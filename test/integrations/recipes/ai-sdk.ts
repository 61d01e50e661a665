import { createMCPClient } from '@ai-sdk/mcp';
import { type StdioConfig, StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { type LanguageModel, stepCountIs, ToolLoopAgent } from 'ai';

/** An AI SDK agent with Cairn's tools: it stores a report and shares it as a web page. */
export async function storeAndShare(model: LanguageModel, cairn: StdioConfig = { command: 'cairn', args: ['mcp'] }) {
  const mcp = await createMCPClient({ transport: new StdioMCPTransport(cairn) });
  try {
    const agent = new ToolLoopAgent({
      model,
      tools: await mcp.tools(),
      stopWhen: stepCountIs(5),
      instructions: 'Store what you write in Cairn; share a file as a web page when asked.',
    });
    const { text } = await agent.generate({
      prompt: 'Write a one-line weekly report, store it in Cairn as report.md and share it as a web page.',
    });
    return text;
  } finally {
    await mcp.close();
  }
}
