import { formatCount } from './units.js';

/**
 * The upload size limits, in binary units: what the hosted service's clients accept (10 MiB
 * inline, 500 MiB in one request), so that a file one of them lets through is never refused by
 * Cairn. The server, the local MCP server and every message and doc say them the same way, the
 * unit spelled out with the exact byte count, since "MB" reads as 1,000,000 to some and
 * 1,048,576 to others.
 */
const MIB = 1024 * 1024;

/** A JSON (base64) upload, the MCP tools' `text`/`content`: 10 MiB decoded. */
export const INLINE_UPLOAD_BYTES = 10 * MIB;
/** A multipart or resumable upload of the Free plan, the local MCP server's `path`: 500 MiB. */
export const SINGLE_UPLOAD_BYTES = 500 * MIB;
/** A presigned or resumable upload of the Pro plan: 5 GiB. */
export const LARGE_UPLOAD_BYTES = 5 * 1024 * MIB;

/** "10 MiB (10,485,760 bytes)"; a size that is no whole number of MiB only in bytes: "1,000 bytes". */
export function limitText(bytes: number): string {
  const exact = `${formatCount(bytes)} bytes`;
  if (bytes === 0 || bytes % MIB !== 0) return exact;
  const gib = bytes / (1024 * MIB);
  return `${Number.isInteger(gib) ? `${gib} GiB` : `${bytes / MIB} MiB`} (${exact})`;
}

export const INLINE_LIMIT_TEXT = limitText(INLINE_UPLOAD_BYTES);
export const SINGLE_LIMIT_TEXT = limitText(SINGLE_UPLOAD_BYTES);
export const LARGE_LIMIT_TEXT = limitText(LARGE_UPLOAD_BYTES);
