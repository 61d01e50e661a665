/**
 * RFC 6266 `Content-Disposition` with an ASCII fallback and the exact UTF-8 name, for presigned
 * downloads that S3 answers itself (the HTTP edge has its own copy for bytes Cairn serves).
 */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
