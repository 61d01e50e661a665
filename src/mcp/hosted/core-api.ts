import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  type ArchiveFormat,
  type ArchiveUrl,
  type ArtifactList,
  type ArtifactRecord,
  type BatchDownloadUrls,
  CairnError,
  type DeleteResult,
  type DownloadResult,
  type DownloadUrl,
  type LinkList,
  type LinkRecord,
  type ListArtifactsQuery,
  type ListLinksQuery,
  type ListSessionsQuery,
  type PublishOptions,
  type PublishResult,
  type RequestUploadUrlInput,
  type RevokeLinkResult,
  type SealResult,
  type SessionLinkRecord,
  type SessionList,
  type SessionRecord,
  scanTranscriptText,
  type UnpublishResult,
  type UploadBytesOptions,
  type UploadTicket,
  type WhoAmI,
  withTranscriptModels,
} from 'cairn-store-sdk';
import {
  artifactsQuery,
  lacksTranscriptModels,
  sessionsQuery,
  uploadWireFields,
  walkPages,
} from 'cairn-store-sdk/internal';
import { blobKey, type Logger } from '../../core/context.js';
import { isCairnError } from '../../core/errors.js';
import type { Core } from '../../core/index.js';
import type { RawQuery } from '../../core/list-query.js';
import { LIMITS } from '../../core/plans.js';
import type { Caller } from '../../core/tenants.js';
import { checkIdempotencyKey } from '../../core/upload.js';
import { uploadRequestFrom } from '../../core/upload-request.js';
import type { CairnApi } from '../context.js';

/** Core errors become the SDK's error type, which the tool table understands; anything else is a 500 that leaks nothing. */
function toClientError(err: unknown, log: Logger): CairnError {
  if (err instanceof CairnError) return err;
  if (isCairnError(err)) {
    return new CairnError({
      code: err.code,
      message: err.message,
      status: err.status,
      retryAfter: err.extras.retryAfterSeconds ?? null,
      upgradeUrl: err.extras.upgradeUrl ?? null,
    });
  }
  log.error({ err }, 'hosted MCP call failed');
  return new CairnError({ code: 'server_error', message: 'Internal server error.', status: 500 });
}

/** A query object without its undefined entries, as a query string would arrive. */
function raw(query: Record<string, string | undefined>): RawQuery {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
}

/**
 * The tools' `CairnApi` over the core services, for one caller's tenant: the hosted MCP endpoint
 * runs the same tool table as the stdio server, without an HTTP hop and without local files.
 * Results are the wire records of the API, so a tool answers identically on both servers.
 */
export class CoreCairnApi implements CairnApi {
  constructor(
    private readonly core: Core,
    private readonly caller: Caller,
  ) {}

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toClientError(err, this.core.deps.log);
    }
  }

  whoami(): Promise<WhoAmI> {
    return this.call(() => this.core.tenants.whoami(this.caller));
  }

  listArtifacts(q: ListArtifactsQuery = {}): Promise<ArtifactList> {
    return this.call(() => this.core.artifacts.list(this.caller, raw(artifactsQuery(q))));
  }

  getArtifact(id: string): Promise<ArtifactRecord> {
    return this.call(() => this.core.artifacts.get(this.caller, id));
  }

  getDownloadUrl(id: string): Promise<DownloadUrl> {
    return this.call(() => this.core.sharing.downloadUrl(this.caller, id));
  }

  downloadUrls(ids: readonly string[]): Promise<BatchDownloadUrls> {
    return this.call(() => this.core.sharing.downloadUrls(this.caller, ids));
  }

  /** Straight from the blob store, after the same read rules as every other route. */
  download(id: string): Promise<DownloadResult> {
    return this.call(async () => {
      const record = await this.core.artifacts.get(this.caller, id);
      const stream = await this.core.deps.blobs.read(blobKey(this.caller.tenant.id, record.content_hash));
      return {
        body: Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array> & WebReadableStream<Uint8Array>,
        sizeBytes: record.size_bytes,
        filename: record.filename,
        contentType: record.content_type,
      };
    });
  }

  listSessions(q: ListSessionsQuery = {}): Promise<SessionList> {
    return this.call(() => this.core.sessions.list(this.caller, raw(sessionsQuery(q))));
  }

  iterateSessions(q: ListSessionsQuery = {}): AsyncIterable<SessionRecord> {
    return walkPages(
      (cursor) => this.listSessions({ ...q, cursor }),
      (page) => page.sessions,
      q.cursor,
    );
  }

  /** The JSON upload path of the API: replay, precheck, stage, commit. */
  uploadBytes(content: Uint8Array | string, opts: UploadBytesOptions): Promise<ArtifactRecord> {
    return this.call(async () => {
      const { uploads } = this.core;
      const key = checkIdempotencyKey(opts.idempotencyKey);
      const replayed = await uploads.replay(this.caller, key);
      if (replayed) {
        opts.onResponse?.({ replayed: true });
        return JSON.parse(replayed.body) as ArtifactRecord;
      }
      const bytes = typeof content === 'string' ? Buffer.from(content) : Buffer.from(content);
      // As the SDK's uploadBytes: a transcript's models go into its metadata.
      const sent =
        opts.transcript && lacksTranscriptModels(opts.metadata)
          ? { ...opts, metadata: withTranscriptModels(opts.metadata, scanTranscriptText(bytes.toString('utf8'))) }
          : opts;
      const req = uploadRequestFrom(uploadWireFields(sent));
      await uploads.precheck(this.caller, req);
      const staged = await uploads.stage(Readable.from([bytes]), LIMITS.jsonDecodedBytes);
      const result = await uploads.finish(this.caller, req, staged, key);
      opts.onResponse?.({ replayed: result.replayed });
      return JSON.parse(result.body) as ArtifactRecord;
    });
  }

  /** There is no local disk on the hosted endpoint: `path` uploads are a stdio feature. */
  uploadStream(): Promise<ArtifactRecord> {
    return Promise.reject(
      new CairnError({
        code: 'invalid_request',
        message: 'The hosted Cairn MCP server has no access to local files; send the bytes as `content`.',
        status: 400,
      }),
    );
  }

  requestUploadUrl(input: RequestUploadUrlInput): Promise<UploadTicket> {
    return this.call(async () => {
      const { ticket, replayed } = await this.core.presigned.reserve(
        this.caller,
        { ...uploadRequestFrom(uploadWireFields(input)), sizeBytes: input.sizeBytes },
        checkIdempotencyKey(input.idempotencyKey),
      );
      input.onResponse?.({ replayed });
      return ticket;
    });
  }

  completeUpload(id: string): Promise<ArtifactRecord> {
    return this.call(() => this.core.presigned.complete(this.caller, id));
  }

  createLink(id: string, opts: { expiresIn?: number; ttl?: string } = {}): Promise<LinkRecord> {
    return this.call(() => this.core.sharing.createLink(this.caller, id, opts));
  }

  createSessionLink(id: string, opts: { expiresIn?: number; ttl?: string } = {}): Promise<SessionLinkRecord> {
    return this.call(() => this.core.sharing.createSessionLink(this.caller, id, opts));
  }

  getSessionArchiveUrl(id: string, opts: { format?: ArchiveFormat } = {}): Promise<ArchiveUrl> {
    return this.call(() => this.core.archives.sessionArchiveUrl(this.caller, id, raw({ format: opts.format })));
  }

  listLinks(id: string, q: ListLinksQuery = {}): Promise<LinkList> {
    return this.call(() =>
      this.core.sharing.listLinks(this.caller, id, raw({ cursor: q.cursor, limit: q.limit?.toString() })),
    );
  }

  revokeLink(linkId: string): Promise<RevokeLinkResult> {
    return this.call(() => this.core.sharing.revokeLink(this.caller, linkId));
  }

  deleteArtifact(id: string): Promise<DeleteResult> {
    return this.call(() => this.core.artifacts.softDelete(this.caller, id));
  }

  sealSession(id: string): Promise<SealResult> {
    return this.call(() => this.core.sessions.seal(this.caller, id));
  }

  publish(id: string, opts: PublishOptions = {}): Promise<PublishResult> {
    const body = {
      visibility: opts.visibility ?? 'unlisted',
      access: opts.access,
      title: opts.title,
      password: opts.password,
    };
    return this.call(() => this.core.pages.publish(this.caller, id, JSON.parse(JSON.stringify(body))));
  }

  unpublish(idOrSlug: string): Promise<UnpublishResult> {
    return this.call(() => this.core.pages.unpublish(this.caller, idOrSlug));
  }
}
