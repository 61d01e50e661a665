import { type Model, type ModelRequest, type ModelResponse, setTracingDisabled, Usage } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, catchWarnings, expectReportShared, startCairn } from './harness.js';
import { storeAndShare } from './recipes/openai-agents.js';
import { nextMove } from './script.js';

/**
 * docs/integrations.md's OpenAI Agents SDK recipe (Agent + MCPServerStdio), run by a minimal
 * class implementing the SDK's Model interface (the SDK exports no test model).
 */

let cairn: Cairn;
beforeAll(async () => {
  cairn = await startCairn();
});
afterAll(async () => {
  await cairn?.close();
});

class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const move = nextMove(JSON.stringify(request.input));
    const usage = new Usage();
    if ('text' in move) {
      return {
        usage,
        output: [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: move.text }],
          },
        ],
      };
    }
    const callId = `call-${this.requests.length}`;
    return {
      usage,
      output: [
        { type: 'function_call', callId, name: move.tool, arguments: JSON.stringify(move.args), status: 'completed' },
      ],
    };
  }
  // biome-ignore lint/correctness/useYield: the runner here never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed in this test');
  }
}

describe('OpenAI Agents SDK: Agent with MCPServerStdio', () => {
  it("loads cairn mcp's tools without a warning and stores and shares a report", async () => {
    // No trace export from a test (it would go to OpenAI's servers).
    setTracingDisabled(true);
    const warnings = catchWarnings();
    const model = new ScriptedModel();
    let answer: string;
    try {
      answer = await storeAndShare(model, cairn.stdio);
    } finally {
      warnings.restore();
    }
    expect(warnings.seen).toEqual([]);
    expect(model.requests).toHaveLength(3);
    const tools = model.requests[0]?.tools ?? [];
    const store = tools.find((t) => t.name === 'store_artifact');
    expect(store).toMatchObject({ type: 'function', description: expect.stringContaining('Save a file to Cairn') });
    expect(JSON.stringify(store)).toContain('"filename"');
    expect(tools.map((t) => t.name)).toContain('publish_artifact');
    await expectReportShared(cairn.srv, answer);
  });
});
