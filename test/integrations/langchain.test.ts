import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import debug from 'debug';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, catchWarnings, expectReportShared, startCairn } from './harness.js';
import { storeAndShare } from './recipes/langchain.js';
import { nextMove } from './script.js';

/** docs/integrations.md's LangChain.js recipe (createAgent + @langchain/mcp-adapters), run by LangChain's fake model. */

let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn();
});
afterAll(async () => {
  await cairn?.close();
});

/** One move of the script, as the AIMessage a chat model would answer with. */
function scriptedReply(messages: BaseMessage[], step: number): AIMessage {
  const move = nextMove(
    JSON.stringify(
      messages.map((m) => ({ type: m.type, content: m.content, tool_calls: (m as AIMessage).tool_calls })),
    ),
  );
  if ('text' in move) return new AIMessage(move.text);
  return new AIMessage({
    content: '',
    tool_calls: [{ id: `call-${step}`, name: move.tool, args: move.args, type: 'tool_call' }],
  });
}

describe('LangChain.js: createAgent with @langchain/mcp-adapters', () => {
  it("loads cairn mcp's tools without a warning and stores and shares a report", async () => {
    const warnings = catchWarnings();
    let openAiTools: ReturnType<typeof convertToOpenAITool>[] = [];
    // The adapters report schemas they had to rewrite or could not load through `debug`.
    const namespaces = debug.disable();
    const log = debug.log;
    debug.enable('@langchain/*');
    const debugLines: string[] = [];
    debug.log = (...args: unknown[]) => {
      const line = args.map(String).join(' ');
      debugLines.push(line);
      if (/WARN|ERROR|Failed|Could not/i.test(line)) warnings.push(`debug: ${line}`);
    };
    const model = fakeModel()
      .respond((m) => scriptedReply(m, 1))
      .respond((m) => scriptedReply(m, 2))
      .respond((m) => scriptedReply(m, 3));
    let bound: StructuredToolInterface[] = [];
    const bindTools = model.bindTools.bind(model);
    model.bindTools = (tools) => {
      bound = tools as StructuredToolInterface[];
      return bindTools(tools);
    };
    let answer: string;
    try {
      answer = await storeAndShare(model, cairn.stdio);
      // What a chat model provider sends for each tool (ChatOpenAI and others convert this way).
      openAiTools = bound.map((t) => convertToOpenAITool(t));
    } finally {
      warnings.restore();
      debug.log = log;
      debug.enable(namespaces);
    }
    expect(warnings.seen).toEqual([]);
    // The net was live: the adapters' own log was heard.
    expect(debugLines.join('\n')).toMatch(/Found \d+ MCP tools/);
    expect(model.callCount).toBe(3);
    // The tools the agent bound are Cairn's, by their own names, with their JSON Schemas.
    const names = openAiTools.map((t) => t.function.name);
    expect(names).toContain('store_artifact');
    expect(names).toContain('publish_artifact');
    const store = openAiTools.find((t) => t.function.name === 'store_artifact');
    expect(store?.function.description).toContain('Save a file to Cairn');
    expect(store?.function.parameters).toMatchObject({ type: 'object', properties: { filename: { type: 'string' } } });
    await expectReportShared(cairn.srv, answer);
  });
});
