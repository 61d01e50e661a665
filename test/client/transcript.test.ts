import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type CairnClient,
  modelOfRecord,
  scanTranscriptFile,
  scanTranscriptText,
  withTranscriptModels,
} from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { clientFor } from './fixtures.js';

/** The SDK's transcript helpers: models read from Claude Code and OpenAI-shaped transcripts. */

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const CLAUDE = {
  model: 'claude-sonnet-4-5-20250929',
  modelsUsed: ['claude-opus-4-1-20250805', 'claude-sonnet-4-5-20250929'],
};
/** The last assistant records are a subagent's (isSidechain) and a <synthetic> one. */
const SUBAGENT_LAST = {
  model: 'claude-opus-4-5-20251101',
  modelsUsed: ['claude-haiku-4-5-20251001', 'claude-opus-4-5-20251101'],
};

describe('reading models', () => {
  it("the model is the last main-loop one, not a subagent's nor <synthetic>; models_used sorted, subagents' included", () => {
    expect(scanTranscriptText(fixture('claude-code-subagent-last.jsonl'))).toEqual(SUBAGENT_LAST);
    // Only a subagent named a model: that one, rather than none.
    const side = `${JSON.stringify({ type: 'assistant', isSidechain: true, message: { role: 'assistant', model: 'sub' } })}\n`;
    expect(scanTranscriptText(side)).toEqual({ model: 'sub', modelsUsed: ['sub'] });
  });

  it('Claude Code JSONL: assistant records only, <synthetic> skipped, the last model, models sorted', () => {
    expect(scanTranscriptText(fixture('claude-code-session.jsonl'))).toEqual(CLAUDE);
    const synthetic = `${JSON.stringify({ type: 'assistant', message: { role: 'assistant', model: '<synthetic>' } })}\n`;
    expect(scanTranscriptText(fixture('claude-code-session.jsonl') + synthetic)).toEqual(CLAUDE);
    expect(modelOfRecord({ type: 'user', message: { role: 'user', model: 'x' } })).toBeNull();
  });

  it('OpenAI shapes: NDJSON, an array, {messages}, chat completion responses', () => {
    const expected = { model: 'gpt-5', modelsUsed: ['gpt-5', 'gpt-5-mini'] };
    const lines = fixture('openai-chat.jsonl');
    expect(scanTranscriptText(lines)).toEqual(expected);
    const records = lines
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(scanTranscriptText(JSON.stringify(records, null, 2))).toEqual(expected);
    expect(scanTranscriptText(JSON.stringify({ messages: records }))).toEqual(expected);
    expect(modelOfRecord({ object: 'chat.completion', model: 'gpt-4o', choices: [] })).toBe('gpt-4o');
  });

  it('nothing recognised: no model; broken lines and huge names are skipped', () => {
    expect(scanTranscriptText('not json\n{"event":"x","model":"m"}\n{"role":"assistant","model":')).toEqual({
      model: null,
      modelsUsed: [],
    });
    expect(modelOfRecord({ role: 'assistant', model: 'x'.repeat(201) })).toBeNull();
  });

  it('fills metadata only where the caller left it empty; a declared model is not marked captured', () => {
    expect(withTranscriptModels(undefined, CLAUDE)).toEqual({
      model: CLAUDE.model,
      model_source: 'transcript',
      models_used: CLAUDE.modelsUsed.join(','),
    });
    expect(withTranscriptModels({ model: 'declared' }, CLAUDE)).toEqual({
      model: 'declared',
      models_used: CLAUDE.modelsUsed.join(','),
    });
    expect(withTranscriptModels({ models_used: 'mine', capture: 'end' }, CLAUDE)).toEqual({
      models_used: 'mine',
      capture: 'end',
      model: CLAUDE.model,
      model_source: 'transcript',
    });
    expect(withTranscriptModels({ a: 1 }, { model: null, modelsUsed: [] })).toEqual({ a: 1 });
  });

  it('reads a file line by line, and a pretty-printed JSON array whole', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cairn-transcript-'));
    const file = path.join(dir, 's.jsonl');
    await writeFile(file, fixture('claude-code-session.jsonl'));
    expect(await scanTranscriptFile(file)).toEqual(CLAUDE);
    const arr = path.join(dir, 'a.json');
    await writeFile(arr, JSON.stringify([{ role: 'assistant', model: 'm1', content: 'x' }], null, 2));
    expect(await scanTranscriptFile(arr)).toEqual({ model: 'm1', modelsUsed: ['m1'] });
  });
});

describe('uploadTranscript and uploadTranscriptFile against a server', () => {
  let s: TestServer;
  let client: CairnClient;
  beforeAll(async () => {
    s = await startTestServer();
    client = clientFor(s);
  });
  afterAll(async () => s?.close());

  it('a file: transcript type, NDJSON, models filled', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cairn-transcript-'));
    const file = path.join(dir, 'session.jsonl');
    await writeFile(file, fixture('claude-code-session.jsonl'));
    const rec = await client.uploadTranscriptFile(file, { sessionId: 'run-1', metadata: { capture: 'end' } });
    expect(rec.content_type).toBe('application/x-ndjson');
    expect(rec.metadata).toEqual({
      capture: 'end',
      type: 'transcript',
      model: CLAUDE.model,
      model_source: 'transcript',
      models_used: CLAUDE.modelsUsed.join(','),
    });
  });

  it('records from memory: written as NDJSON; a declared model wins', async () => {
    const records = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', model: 'gpt-5', content: 'hello' },
    ];
    const rec = await client.uploadTranscript(records, { filename: 'chat.ndjson', metadata: { model: 'agent-x' } });
    expect(rec.metadata).toEqual({ type: 'transcript', model: 'agent-x', models_used: 'gpt-5' });
    const got = await client.download(rec.artifact_id);
    const text = Buffer.from(await new Response(got.body as ReadableStream).arrayBuffer()).toString();
    expect(text).toBe(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  });

  it('transcript: true on uploadFile, uploadBytes and uploadResumable reads the models as the helpers do', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cairn-transcript-'));
    const file = path.join(dir, 'sub.jsonl');
    const text = fixture('claude-code-subagent-last.jsonl');
    await writeFile(file, text);
    const expected = {
      type: 'transcript',
      model: SUBAGENT_LAST.model,
      model_source: 'transcript',
      models_used: SUBAGENT_LAST.modelsUsed.join(','),
    };
    for (const rec of [
      await client.uploadFile(file, { transcript: true }),
      await client.uploadBytes(text, { filename: 'sub.jsonl', transcript: true }),
      await client.uploadResumable(file, { transcript: true }),
    ]) {
      expect(rec.metadata).toEqual(expected);
    }
    // Without the word, nothing is read.
    expect((await client.uploadFile(file)).metadata).toEqual({});
  });
});
