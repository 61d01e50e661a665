import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, catchWarnings, expectReportShared, startCairn } from './harness.js';
import { storeAndShare } from './recipes/ai-sdk.js';
import { nextMove } from './script.js';

/** docs/integrations.md's Vercel AI SDK recipe, run by the AI SDK's own mock model. */

let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn();
});
afterAll(async () => {
  await cairn?.close();
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** MockLanguageModelV4 answering each step from what the loop sent it. */
function scriptedModel() {
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      const move = nextMove(JSON.stringify(options.prompt));
      step += 1;
      if ('text' in move) {
        return {
          content: [{ type: 'text', text: move.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      }
      return {
        content: [
          { type: 'tool-call', toolCallId: `call-${step}`, toolName: move.tool, input: JSON.stringify(move.args) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

describe('Vercel AI SDK: ToolLoopAgent with @ai-sdk/mcp', () => {
  it("loads cairn mcp's tools without a warning and stores and shares a report", async () => {
    const warnings = catchWarnings();
    const g = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
    g.AI_SDK_LOG_WARNINGS = (w: unknown) => warnings.push(`AI SDK: ${JSON.stringify(w)}`);
    const model = scriptedModel();
    let answer: string;
    try {
      answer = await storeAndShare(model, cairn.stdio);
    } finally {
      warnings.restore();
      g.AI_SDK_LOG_WARNINGS = undefined;
    }
    expect(warnings.seen).toEqual([]);
    // The model saw Cairn's tools as the MCP server described them.
    const tools = model.doGenerateCalls[0]?.tools ?? [];
    const store = tools.find((t) => t.name === 'store_artifact');
    expect(store).toMatchObject({ type: 'function', description: expect.stringContaining('Save a file to Cairn') });
    expect(JSON.stringify(store)).toContain('"filename"');
    expect(tools.map((t) => t.name)).toContain('publish_artifact');
    expect(model.doGenerateCalls).toHaveLength(3);
    await expectReportShared(cairn.srv, answer);
  });
});
