import {
  ErrorCode,
  McpError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { ArtifactRecord, SessionRecord } from 'cairn-store-sdk';
import type { ToolContext } from './context.js';
import { failureFrom } from './results.js';

/**
 * Cairn's MCP resources (read tier): the account, an artifact record, an artifact's bytes for
 * preview (100 MB cap) and a session view. resources/list names the account and recent artifacts.
 */

export const BYTES_CAP = 100 * 1024 * 1024;
const RECENT = 20;
const JSON_TYPE = 'application/json';

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: 'cairn://artifact/{artifact_id}',
    name: 'artifact',
    title: 'Artifact record',
    description: "An artifact's record (metadata, size, hash, page) as JSON.",
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: 'cairn://artifact/{artifact_id}/bytes',
    name: 'artifact-bytes',
    title: 'Artifact contents',
    description: "An artifact's bytes for preview (up to 100 MB): text types as text, others as base64.",
  },
  {
    uriTemplate: 'cairn://session/{session_id}',
    name: 'session',
    title: 'Session view',
    description: 'A session: is_sealed, counts, and its newest artifacts.',
    mimeType: JSON_TYPE,
  },
];

export async function listResources(ctx: ToolContext): Promise<Resource[]> {
  const whoami: Resource = {
    uri: 'cairn://whoami',
    name: 'whoami',
    title: 'Cairn account',
    description: 'Plan, usage and limits of the account the API key belongs to.',
    mimeType: JSON_TYPE,
  };
  const recent = await guard(() => ctx.client.listArtifacts({ limit: RECENT }), ctx);
  return [
    whoami,
    ...recent.artifacts.map(
      (a): Resource => ({
        uri: `cairn://artifact/${a.artifact_id}`,
        name: a.filename,
        description: `${a.content_type}, ${a.size_bytes} bytes, created ${a.created_at}`,
        mimeType: JSON_TYPE,
      }),
    ),
  ];
}

export async function readResource(uri: string, ctx: ToolContext): Promise<ReadResourceResult> {
  const json = (data: unknown): ReadResourceResult => ({
    contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(data, null, 2) }],
  });
  if (uri === 'cairn://whoami') return json(await guard(() => ctx.client.whoami(), ctx));
  let m = /^cairn:\/\/artifact\/([^/]+)$/.exec(uri);
  if (m) return json(await guard(() => ctx.client.getArtifact(decodeURIComponent(m?.[1] ?? '')), ctx));
  m = /^cairn:\/\/artifact\/([^/]+)\/bytes$/.exec(uri);
  if (m) return readBytes(uri, decodeURIComponent(m[1] ?? ''), ctx);
  m = /^cairn:\/\/session\/([^/]+)$/.exec(uri);
  if (m) return json(await guard(() => sessionView(decodeURIComponent(m?.[1] ?? ''), ctx), ctx));
  throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${uri}`);
}

async function readBytes(uri: string, id: string, ctx: ToolContext): Promise<ReadResourceResult> {
  const record = await guard(() => ctx.client.getArtifact(id), ctx);
  if (record.size_bytes > BYTES_CAP) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `${record.filename} is ${record.size_bytes} bytes, over the 100 MB preview cap; use get_artifact_download_url.`,
      { status: 413, code: 'file_too_large', retry_hint: 'fix_arguments' },
    );
  }
  const { body, contentType } = await guard(() => ctx.client.download(id), ctx);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > BYTES_CAP) throw new McpError(ErrorCode.InternalError, 'Artifact grew past the preview cap.');
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  if (isText(contentType)) return { contents: [{ uri, mimeType: contentType, text: bytes.toString('utf8') }] };
  return { contents: [{ uri, mimeType: contentType, blob: bytes.toString('base64') }] };
}

/** A session's record (walking the session list) and its newest artifacts. */
async function sessionView(id: string, ctx: ToolContext) {
  let session: SessionRecord | null = null;
  for await (const s of ctx.client.iterateSessions({ limit: 200 })) {
    if (s.session_id === id) {
      session = s;
      break;
    }
  }
  if (!session) {
    throw new McpError(ErrorCode.InvalidParams, `No session ${id} in this account.`, {
      status: 404,
      code: 'session_not_found',
      retry_hint: 'fix_arguments',
    });
  }
  const page = await ctx.client.listArtifacts({ sessionId: id, limit: 50 });
  const artifacts: ArtifactRecord[] = page.artifacts;
  return { ...session, artifacts, artifacts_next_cursor: page.next_cursor };
}

export function isText(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    [
      'application/json',
      'application/x-ndjson',
      'application/xml',
      'application/javascript',
      'application/yaml',
      'application/x-yaml',
      'application/toml',
      'application/sql',
    ].includes(type)
  );
}

/** Runs an API call; a failure becomes a protocol error carrying the tool-style `_meta` fields. */
async function guard<T>(fn: () => Promise<T>, ctx: ToolContext): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof McpError) throw err;
    const result = failureFrom(err, { keyHint: ctx.keyHint });
    const text = result.content[0]?.type === 'text' ? result.content[0].text : 'Cairn request failed.';
    const status = Number(result._meta?.status ?? 500);
    throw new McpError(status >= 500 || status === 0 ? ErrorCode.InternalError : ErrorCode.InvalidParams, text, {
      ...result._meta,
    });
  }
}
