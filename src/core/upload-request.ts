/** Upload fields as they arrive from any edge, not yet validated. */
export interface UploadRequest {
  filename?: unknown;
  contentType?: unknown;
  /** The type the transport labelled the bytes with (a multipart part's Content-Type). */
  partType?: string;
  sessionId?: unknown;
  agentId?: unknown;
  ttl?: unknown;
  metadata?: unknown;
  transcript?: unknown;
}

/**
 * The upload fields of the wire (a JSON body's keys, multipart form fields, tus Upload-Metadata
 * keys, the MCP tools' arguments, the SDKs' wire names) and the request field each fills. The one
 * place a new upload field is named on the server's side of the wire.
 */
export const UPLOAD_WIRE_FIELDS = {
  filename: 'filename',
  content_type: 'contentType',
  session_id: 'sessionId',
  agent_id: 'agentId',
  ttl: 'ttl',
  metadata: 'metadata',
  transcript: 'transcript',
} as const satisfies Record<string, Exclude<keyof UploadRequest, 'partType'>>;

export type UploadWireField = keyof typeof UPLOAD_WIRE_FIELDS;
/** Upload fields under their wire names; values as the edge decoded them (strings from forms and tus). */
export type WireUploadFields = { [K in UploadWireField]?: unknown };

/** Own keys only: `constructor` or `__proto__` are no field names. */
export function isUploadWireField(name: string): name is UploadWireField {
  return Object.hasOwn(UPLOAD_WIRE_FIELDS, name);
}

/** The wire names, for messages that list them. */
export const UPLOAD_WIRE_NAMES = Object.keys(UPLOAD_WIRE_FIELDS) as UploadWireField[];

/**
 * Wire fields → the core's upload request, for every edge: JSON and multipart uploads, presigned
 * and tus creations, the hosted MCP server (through the SDK's wire names). Other keys of `wire`
 * (the JSON body's `content`, `size_bytes`) are not upload fields and are left alone.
 */
export function uploadRequestFrom(wire: WireUploadFields): UploadRequest {
  const req: UploadRequest = {};
  for (const name of UPLOAD_WIRE_NAMES) {
    const value = wire[name];
    if (value !== undefined) req[UPLOAD_WIRE_FIELDS[name]] = value;
  }
  return req;
}
