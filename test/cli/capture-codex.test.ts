import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, okJson } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * `cairn capture codex` with the real binary (dist/) on a Codex CLI rollout: the fixture was
 * written by `codex exec` 0.171.0 (which records the session before it reaches the network),
 * trimmed of Codex's own instructions, with a second turn on another model added by hand.
 */

const ROLLOUT = new URL('../fixtures/codex-rollout.jsonl', import.meta.url);
const SESSION = '01a23491-412c-7863-a91f-e4da41e16c7e';

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let codexHome: string;
let rollout: string;

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  codexHome = path.join(ws.work, 'codex-home');
  rollout = await readFile(ROLLOUT, 'utf8');
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

const cairn = (args: string[]) => ws.run(args, { CAIRN_API_KEY: server.apiKey, CODEX_HOME: codexHome });

/** A rollout where Codex keeps them, for session `id`, run in folder `cwd`, last written at `when`. */
async function placeRollout(id: string, cwd: string, when: Date): Promise<string> {
  const file = path.join(codexHome, 'sessions', '2026', '12', '02', `rollout-2026-12-02T02-24-24-${id}.jsonl`);
  await mkdir(path.dirname(file), { recursive: true });
  const text = rollout.replaceAll(SESSION, id).replaceAll('"cwd":"/tmp/hosts/cx/proj"', `"cwd":${JSON.stringify(cwd)}`);
  await writeFile(file, text);
  await utimes(file, when, when);
  return file;
}

describe('cairn capture codex', { timeout: 60_000 }, () => {
  it("pushes a rollout as a transcript with the last turn's model and every model, sorted", async () => {
    const file = await ws.file('rollout.jsonl', rollout);
    const rec = okJson(await cairn(['capture', 'codex', '--transcript-path', file, '--json']));
    expect(rec).toMatchObject({
      filename: `codex-${SESSION}.jsonl`,
      session_id: SESSION,
      agent_id: 'codex',
      content_type: 'application/x-ndjson',
      size_bytes: Buffer.byteLength(rollout),
    });
    expect(rec.metadata).toEqual({
      type: 'transcript',
      capture: 'snapshot',
      model: 'gpt-5.5-codex',
      model_source: 'transcript',
      models_used: 'gpt-5.5-codex,gpt-6.2-sol',
    });
    // The same rollout again stores nothing new.
    const again = okJson(await cairn(['capture', 'codex', '--transcript-path', file, '--json']));
    expect(again.artifact_id).toBe(rec.artifact_id);
  });

  it('finds the newest rollout of this folder, or the session named, under CODEX_HOME', async () => {
    const mine = '11111111-2222-4333-8444-555555555555';
    const other = '99999999-2222-4333-8444-555555555555';
    await placeRollout(mine, ws.work, new Date('2026-12-02T02:00:00Z'));
    await placeRollout(other, '/somewhere/else', new Date('2026-12-02T03:00:00Z'));
    expect(okJson(await cairn(['capture', 'codex', '--json'])).session_id).toBe(mine);
    expect(okJson(await cairn(['capture', 'codex', '--session-id', other, '--json'])).session_id).toBe(other);
  });

  it('says what is wrong, exit 2, for no rollout, an unknown session or a file that is not one', async () => {
    const none = await ws.run(['capture', 'codex'], {
      CAIRN_API_KEY: server.apiKey,
      CODEX_HOME: path.join(ws.work, 'empty'),
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no Codex rollout of this folder');
    const unknown = await cairn(['capture', 'codex', '--session-id', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no rollout of session 00000000-0000-4000-8000-000000000000');
    const notOne = await ws.file('notes.jsonl', '{"hello":"world"}\n');
    const refused = await cairn(['capture', 'codex', '--transcript-path', notOne]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is not a Codex rollout');
  });
});
