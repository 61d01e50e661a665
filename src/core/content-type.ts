/**
 * Picks the stored content type: the declared one, else the upload part's, else by extension,
 * else `application/octet-stream`. A few extensions always win (the spec's server-side override),
 * because clients routinely mislabel them and the page renderer depends on the stored type.
 */
const OVERRIDES: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  webp: 'image/webp',
  jfif: 'image/jpeg',
  apng: 'image/apng',
};

const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  log: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  xhtml: 'application/xhtml+xml',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  avif: 'image/avif',
  ico: 'image/x-icon',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  webm: 'video/webm',
  py: 'text/x-python',
  ts: 'text/plain',
  sh: 'text/x-shellscript',
};

const MIME =
  /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;\s*[a-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[a-z0-9!#$&^_.+-]+))*$/;

export const DEFAULT_TYPE = 'application/octet-stream';

export function isValidContentType(s: string): boolean {
  return s.length <= 255 && MIME.test(s.toLowerCase());
}

function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
}

/** Media type without parameters, lowercased: `text/html; charset=utf-8` → `text/html`. */
export function essence(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export function resolveContentType(filename: string, declared?: string, partType?: string): string {
  const ext = extensionOf(filename);
  const override = OVERRIDES[ext];
  if (override) return override;
  if (declared) return declared;
  // A multipart part labelled octet-stream says nothing (curl and browsers default to it).
  if (partType && essence(partType) !== DEFAULT_TYPE && isValidContentType(partType)) return partType;
  return BY_EXTENSION[ext] ?? DEFAULT_TYPE;
}
