import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { createAgent } from 'langchain';

type Stdio = { command: string; args: string[]; env?: Record<string, string> };

/** A LangChain.js agent with Cairn's tools: it stores a report and shares it as a web page. */
export async function storeAndShare(model: BaseChatModel, cairn: Stdio = { command: 'cairn', args: ['mcp'] }) {
  const mcp = new MultiServerMCPClient({ mcpServers: { cairn: { transport: 'stdio', ...cairn } } });
  try {
    const agent = createAgent({
      model,
      tools: await mcp.getTools(),
      systemPrompt: 'Store what you write in Cairn; share a file as a web page when asked.',
    });
    const { messages } = await agent.invoke({
      messages: [
        {
          role: 'user',
          content: 'Write a one-line weekly report, store it in Cairn as report.md and share it as a web page.',
        },
      ],
    });
    return messages.at(-1)?.text ?? '';
  } finally {
    await mcp.close();
  }
}
