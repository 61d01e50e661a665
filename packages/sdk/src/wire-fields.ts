import type { UploadOptions } from './types.js';

/**
 * An upload's fields under their wire names, values as given (`metadata` an object, `transcript`
 * a boolean): the one place the SDK names them. The JSON body, the multipart form, tus
 * Upload-Metadata and the presigned request are all made from it, and the hosted MCP server hands
 * it to the core as it is.
 */
export function uploadWireFields(opts: Omit<UploadOptions, 'filename'> & { filename: string }) {
  return {
    filename: opts.filename,
    content_type: opts.contentType,
    session_id: opts.sessionId,
    agent_id: opts.agentId,
    ttl: opts.ttl,
    metadata: opts.metadata,
    transcript: opts.transcript,
  };
}
