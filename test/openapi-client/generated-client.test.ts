import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The served OpenAPI document, taken at its word by the tools people generate clients with:
 * `openapi-typescript` types, `openapi-fetch` calls (every-operation.ts), `tsc --strict`, and then
 * those calls run against a live server.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const CALLS = path.join(import.meta.dirname, 'every-operation.ts');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
// Each check's folder is two levels below the root, like test/openapi-client, so every-operation.ts's
// imports hold in both places.
const workDir = (name: string) => path.join(ROOT, 'test-output', `openapi-client-${process.pid}-${name}`);
const checkedDirs: string[] = [];

interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}
/** What every-operation.ts reports per operation (it is type-checked only beside its generated types). */
interface Outcome {
  status: number;
  detail?: unknown;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, { description?: string }>;
}

let s: TestServer;
let doc: Doc;

beforeAll(async () => {
  // The report the calls make goes to the operators' log: here, nowhere.
  s = await startTestServer({ plan: 'pro', operatorLog: new Writable({ write: (_chunk, _enc, done) => done() }) });
  const r = await api(s.apiUrl, null, 'GET', '/v1/openapi.json');
  expect(r.status).toBe(200);
  doc = r.json;
});
afterAll(async () => {
  await s?.close();
  for (const dir of checkedDirs) await rm(dir, { recursive: true, force: true });
});

function operations(d: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(d.paths).flatMap(([p, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method, path: p, op })),
  );
}

/** Writes the types generated from `d` beside a copy of every-operation.ts and type-checks them. */
async function typecheck(d: Doc, name: string): Promise<{ ok: boolean; output: string; dir: string }> {
  const dir = workDir(name);
  checkedDirs.push(dir);
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'cairn-api.ts'),
    astToString(await openapiTS(structuredClone(d) as unknown as OpenAPI3)),
  );
  await copyFile(CALLS, path.join(dir, 'every-operation.ts'));
  const tsconfig = {
    compilerOptions: {
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node'],
      skipLibCheck: true,
    },
    files: ['every-operation.ts'],
  };
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  try {
    await promisify(execFile)(process.execPath, [TSC, '-p', dir], { cwd: dir });
    return { ok: true, output: '', dir };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}`, dir };
  }
}

describe('the OpenAPI document', () => {
  it('names every operation (unique camelCase operationId) and describes it and each of its answers', () => {
    const ids: string[] = [];
    const problems: string[] = [];
    for (const { method, path: p, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${p}`;
      if (!op.operationId || !/^[a-z][a-zA-Z0-9]*$/.test(op.operationId)) problems.push(`${where}: operationId`);
      else ids.push(op.operationId);
      if (!op.summary?.trim()) problems.push(`${where}: summary`);
      if (!op.description?.trim()) problems.push(`${where}: description`);
      for (const [status, response] of Object.entries(op.responses)) {
        const text = response.description?.trim() ?? '';
        if (!text || text === 'Default Response') problems.push(`${where} ${status}: description`);
      }
    }
    expect(problems).toEqual([]);
    expect(ids.length).toBeGreaterThan(15);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names its schemas (no def-N), and every $ref points at one of them', () => {
    const names = Object.keys(doc.components?.schemas ?? {});
    expect(names.filter((n) => /^def-\d+$/.test(n))).toEqual([]);
    for (const shared of [
      'Artifact',
      'ArtifactList',
      'ErrorEnvelope',
      'Link',
      'Pagination',
      'Session',
      'SessionList',
    ]) {
      expect(names).toContain(shared);
    }
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(50);
    expect(refs.filter((r) => !names.some((n) => r === `#/components/schemas/${n}`))).toEqual([]);
    // The lists share the Pagination component rather than each spelling its fields.
    expect(JSON.stringify(doc.components?.schemas?.ArtifactList)).toContain('#/components/schemas/Pagination');
  });

  it('documents the metadata.<key> filter on the list operation', () => {
    const list = doc.paths['/v1/artifacts']!.get!;
    expect(list.operationId).toBe('listArtifacts');
    expect(list.description).toMatch(/`metadata\.<key>=<value>`/);
    expect(list.description).toMatch(/up to 8 per query, all must match/);
  });

  it('declares bearer security exactly on the operations that refuse a request without a key', async () => {
    const wrong: string[] = [];
    for (const { method, path: p, op } of operations(doc)) {
      const url = p
        .replace('{id}', 'art_0000000000000000')
        .replace('{slug}', 'pg_0000000000000000')
        .replace('{link_id}', 'lnk_00000000000000000000');
      const r = await api(s.apiUrl, null, method.toUpperCase(), url);
      const declared = (op.security ?? []).some((req) => 'bearer' in req);
      if (declared !== (r.status === 401))
        wrong.push(`${method.toUpperCase()} ${p}: ${r.status}, declared ${declared}`);
    }
    expect(wrong).toEqual([]);
    expect(doc.paths['/v1/artifacts']!.post!.security).toEqual([{ bearer: [] }]);
  });
});

describe('a client generated from it', () => {
  it('type-checks (tsc --strict) with a call of every operation, and those calls work', async () => {
    const checked = await typecheck(doc, 'served');
    expect(checked.output).toBe('');
    expect(checked.ok).toBe(true);

    const calls = (await import(pathToFileURL(path.join(checked.dir, 'every-operation.ts')).href)) as {
      callEveryOperation(baseUrl: string, apiKey: string): Promise<Record<string, Outcome>>;
    };
    const outcomes = await calls.callEveryOperation(s.apiUrl, s.apiKey);
    const noteId = (outcomes.listArtifacts!.detail as { note: string }).note;
    expect(outcomes).toEqual({
      getHealth: { status: 200, detail: 'ok' },
      getWhoami: { status: 200, detail: 'pro' },
      uploadArtifact: { status: 201, detail: [201, 'form.txt'] },
      listArtifacts: { status: 200, detail: { listed: [noteId], hasMore: false, note: noteId } },
      getArtifact: { status: 200, detail: null },
      getDownloadUrl: { status: 200, detail: 'string' },
      getDownloadUrls: { status: 200, detail: 2 },
      createLink: { status: 201, detail: ['lnk_', 201, 201, 86_400] },
      listLinks: { status: 200, detail: 2 },
      revokeLink: { status: 200, detail: true },
      listSessions: { status: 200, detail: [['openapi-run', 2]] },
      requestUploadUrl: { status: 201, detail: 'pending' },
      putUpload: { status: 200, detail: 5 },
      completeUpload: { status: 200, detail: 5 },
      getResumableUploadOptions: { status: 204, detail: '1.0.0' },
      createResumableUpload: { status: 201, detail: 'art_' },
      getResumableUploadOffset: { status: 200, detail: '7' },
      appendToResumableUpload: { status: 204, detail: [204, '11', 11] },
      terminateResumableUpload: { status: 204, detail: 404 },
      publishArtifact: { status: 200, detail: 'password' },
      getPageGateInfo: { status: 200, detail: 'password' },
      unlockPage: { status: 200, detail: 300 },
      reportPage: { status: 202, detail: true },
      unpublishArtifact: { status: 200, detail: true },
      deleteArtifact: { status: 200, detail: ['string', 410, 'artifact_already_deleted'] },
      sealSession: { status: 200, detail: 'sealed' },
      getSessionArchive: { status: 303, detail: true },
      getArtifactsArchive: { status: 303, detail: true },
      createSessionLink: { status: 201, detail: 'lnk_' },
      listSessionLinks: { status: 200, detail: 1 },
      listEvents: { status: 200, detail: 'session.sealed' },
      streamEvents: { status: 200, detail: 'artifact.deleted' },
      createWebhook: { status: 201, detail: 'whsec_' },
      listWebhooks: { status: 200, detail: 1 },
      getWebhook: { status: 200, detail: 'active' },
      rotateWebhookSecret: { status: 200, detail: true },
      enableWebhook: { status: 200, detail: 'active' },
      listWebhookDeliveries: { status: 200, detail: 0 },
      deleteWebhook: { status: 200, detail: true },
    });
  });

  it('stops type-checking when an operation loses its operationId or a response schema drifts', async () => {
    // The guard above is only as good as its failure: a document with one operationId gone, and
    // one with a record field renamed, must each fail the same check.
    const noId = structuredClone(doc);
    delete noId.paths['/v1/artifacts/{id}']!.get!.operationId;
    const lost = await typecheck(noId, 'lost-operation-id');
    expect(lost.ok).toBe(false);
    expect(lost.output).toMatch(/'getArtifact' does not exist in type 'Record<keyof operations, Outcome>'/);

    const drifted = structuredClone(doc);
    const artifact = drifted.components!.schemas!.Artifact as {
      properties: Record<string, unknown>;
      required: string[];
    };
    artifact.properties.file_name = artifact.properties.filename;
    delete artifact.properties.filename;
    artifact.required = artifact.required.map((f) => (f === 'filename' ? 'file_name' : f));
    const renamed = await typecheck(drifted, 'drifted-schema');
    expect(renamed.ok).toBe(false);
    // The SDK's record types are the server's schemas (src/wire), so the compiler spells the
    // type out rather than naming it: the failure is told by where it is, the SDK's artifact line.
    const calls = (await readFile(CALLS, 'utf8')).split('\n');
    const artifactLine = calls.findIndex((l) => l.includes("artifact: (x: Schemas['Artifact'])")) + 1;
    expect(artifactLine).toBeGreaterThan(0);
    expect(renamed.output).toContain(`every-operation.ts(${artifactLine},`);
    expect(renamed.output).toContain('filename');
  });
});
