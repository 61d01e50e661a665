import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { CairnClient } from 'cairn-store-sdk';
import { z } from 'zod';
import type { OpenedFile } from './paths.js';

/**
 * What a tool handler gets. The stdio server fills it with the SDK client and the path
 * confinement; the hosted server with CoreCairnApi (src/mcp/hosted/core-api.ts), which calls the
 * core for the caller's tenant, and no local files. Handlers know nothing about the transport.
 */
export interface ToolContext {
  client: CairnApi;
  /** The connected MCP client (`initialize` clientInfo), when known. */
  clientInfo?: { name: string; version?: string };
  /** Last four characters of the API key, named in authentication failures. */
  keyHint?: string;
  /** Opens a local file under path confinement; absent where there is no local disk (hosted). */
  openLocalFile?: (path: string) => Promise<OpenedFile>;
}

/** The part of the SDK client the tools and resources use. */
export type CairnApi = Pick<
  CairnClient,
  | 'whoami'
  | 'listArtifacts'
  | 'getArtifact'
  | 'getDownloadUrl'
  | 'downloadUrls'
  | 'download'
  | 'listSessions'
  | 'iterateSessions'
  | 'uploadBytes'
  | 'uploadStream'
  | 'requestUploadUrl'
  | 'completeUpload'
  | 'createLink'
  | 'createSessionLink'
  | 'getSessionArchiveUrl'
  | 'listLinks'
  | 'revokeLink'
  | 'deleteArtifact'
  | 'sealSession'
  | 'publish'
  | 'unpublish'
>;

/** Which server lists the tool: the local stdio one, or the hosted endpoint (no local files). */
export type Where = 'local' | 'hosted';

/** Permission tier of the hosted server's consent screen (publish tools are write). */
export type Tier = 'read' | 'write' | 'destroy';

export interface ToolDef {
  name: string;
  title: string;
  /**
   * Written for the agent: what it does, when to use it, and what not to use it for. A function
   * when it names another tool the client may not be shown: `listed` says which ones it sees.
   */
  description: string | ((listed: (tool: string) => boolean, where: Where) => string);
  /** Arguments only the local server can honour (a local file path): not listed by the hosted one. */
  localArgs?: readonly string[];
  /**
   * Rules across arguments, or beyond what the schema can say, checked before anything is asked
   * or sent: a message naming what to change, or null.
   */
  validate?(args: Record<string, unknown>): string | null;
  tier: Tier;
  /** The destructive class gated on local stdio (create_download_link, delete_artifact, seal_session). */
  destructive: boolean;
  annotations: ToolAnnotations;
  input: z.AnyZodObject;
  /** Set on non-idempotent tools: one attempt, and on 5xx/network failure this tells how to verify. */
  verifyOnAmbiguity?: string;
  /**
   * A correct call, shown in every argument error of the tool (the agent-experience suite checks
   * that it passes the tool's own schema).
   */
  example: Record<string, unknown>;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<CallToolResult>;
}

/** Types a tool's handler by its input shape, then erases the type for the table. */
export function defineTool<S extends z.ZodRawShape>(
  def: Omit<ToolDef, 'input' | 'run' | 'validate'> & {
    input: S;
    validate?(args: z.infer<z.ZodObject<S>>): string | null;
    run(args: z.infer<z.ZodObject<S>>, ctx: ToolContext): Promise<CallToolResult>;
  },
): ToolDef {
  return {
    ...def,
    input: z.object(def.input).strict(),
    validate: def.validate as ToolDef['validate'],
    run: def.run as ToolDef['run'],
  };
}

// Shared argument schemas, with the API's rules so that the agent sees them in the tool schema.
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const LABEL_RULE = '1-128 letters, digits, ".", "_" or "-", starting with a letter or digit';

/** The id shape, checked here so a filename passed as an id is told so before any call. */
export const artifactId = z
  .string()
  .regex(
    /^art_[A-Za-z0-9]{16}$/,
    'is not an artifact id: ids are art_ followed by 16 letters or digits (e.g. art_3fK9xQ2LmN8pR4tV); ' +
      'find one with list_artifacts, e.g. {"filename": "report.md"}',
  )
  .describe('Artifact id: art_ followed by 16 letters or digits, e.g. art_3fK9xQ2LmN8pR4tV (from list_artifacts).');
export const sessionId = z
  .string()
  .regex(LABEL, `must be ${LABEL_RULE}, e.g. "run-2026-11-26"`)
  .describe(`Session label, ${LABEL_RULE}, e.g. "run-2026-11-26".`);
export const agentId = z
  .string()
  .regex(LABEL, `must be ${LABEL_RULE}, e.g. "research-bot"`)
  .describe(`Agent label, ${LABEL_RULE}, e.g. "research-bot".`);
export const ttl = z
  .string()
  .trim()
  .regex(/^(?:never|[1-9]\d*[smhd])$/, 'must be a count of s, m, h or d (e.g. "7d", "12h"), or "never"')
  .describe(
    'Time to live, e.g. "7d": a count of seconds, minutes, hours or days ("3600s", "90m", "24h", "7d"), or "never" ' +
      '(the longest the plan allows: 90 days Free, 365 days Pro). Default 30d.',
  );
/** An Idempotency-Key as the API takes it. */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, 'must be 1-256 printable ASCII characters without spaces, e.g. a UUID');
export const limit = z.number().int().min(1).max(200).describe('Page size, 1-200 (default 50), e.g. 20.');
export const cursor = z.string().min(1).describe('next_cursor from the previous page (opaque; pass it unchanged).');
/**
 * A time bound. A factory, not one shared schema: the JSON Schema converter writes a second use of
 * the same schema in one tool as a `$ref`, which some hosts do not resolve.
 */
export const timestamp = (bound: 'after' | 'before') =>
  z
    .string()
    .min(1)
    .describe(`Only those created ${bound} this instant (exclusive): RFC 3339, e.g. 2026-01-31T00:00:00Z.`);
export const metadataObject = z
  .record(z.string(), z.unknown())
  .describe(
    'JSON object, at most 8 KB; keys match ^[a-zA-Z][a-zA-Z0-9_-]{0,63}$ (no dots), e.g. {"type": "report", "step": 3}.',
  );
