import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core/index.js';
import { UPLOAD_SLOT_AFTER_BYTES } from '../core/upload-slots.js';

/** Whether a request announces a body over UPLOAD_SLOT_AFTER_BYTES, or one of unknown length (chunked). */
export function announcesLargeBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  return Number(headers['content-length']) > UPLOAD_SLOT_AFTER_BYTES;
}

/**
 * For a request that announces a large body: takes one of `tenantId`'s upload slots (see
 * UploadSlots) before any of the body is read, or throws 429 `rate_limited` if it holds them all.
 * The slot is held until the response is over, sent or cut off with its connection: the response
 * always emits `close` then, however the request ended.
 */
export function holdUploadSlot(core: Core, request: FastifyRequest, reply: FastifyReply, tenantId: string): void {
  // A response already closed (the client left before this hook ran) emits no second `close`.
  if (!announcesLargeBody(request.headers) || reply.raw.destroyed) return;
  const release = core.uploadSlots.take(tenantId);
  reply.raw.once('close', release);
}
