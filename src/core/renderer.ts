/**
 * Which renderer a page uses (the spec's Page renderers table, with the readable previews of
 * issue 35). Chosen from the stored MIME type; open pages also look at the filename (`.md` is
 * Markdown whatever its type, code is highlighted by extension) and at `metadata.type=transcript`,
 * but a gated page (after unlock) uses the stored type only, so a password page can never be
 * turned into a different renderer by its filename or metadata.
 */
export type RendererKind = 'html' | 'markdown' | 'image' | 'text' | 'code' | 'json' | 'csv' | 'transcript' | 'download';

/** The renderers whose document the content origin builds from the bytes (no bytes served raw). */
export const PREVIEW_KINDS: ReadonlySet<RendererKind> = new Set(['text', 'code', 'json', 'csv', 'transcript']);

/** The media type without parameters, lower-cased: `Text/HTML; charset=utf-8` → `text/html`. */
export function essence(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** HTML for the password rule: `text/html` and `application/xhtml+xml` can never be gated. */
export function isHtmlType(contentType: string): boolean {
  const t = essence(contentType);
  return t === 'text/html' || t === 'application/xhtml+xml';
}

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'application/jsonlines',
]);
const CSV_TYPES = new Set(['text/csv', 'application/csv', 'text/tab-separated-values']);
/** Non-`text/*` types that are text all the same. */
const TEXT_TYPES = new Set([
  'application/javascript',
  'application/x-javascript',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
  'application/x-shellscript',
  'application/sql',
  'application/x-diff',
  'application/x-patch',
]);

/** Code highlighted on open pages, by extension (the language names of highlight.js). */
export const CODE_LANGUAGES: Readonly<Record<string, string>> = {
  py: 'python',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  go: 'go',
  rs: 'rust',
  java: 'java',
  kt: 'kotlin',
  swift: 'swift',
  c: 'c',
  h: 'c',
  cpp: 'cpp',
  cc: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  cs: 'csharp',
  rb: 'ruby',
  php: 'php',
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  sql: 'sql',
  yaml: 'yaml',
  yml: 'yaml',
  toml: 'ini',
  ini: 'ini',
  xml: 'xml',
  css: 'css',
  lua: 'lua',
  r: 'r',
  diff: 'diff',
  patch: 'diff',
};

export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
}

/** The highlight.js language of an open page's filename, or null. */
export function codeLanguage(filename: string): string | null {
  return CODE_LANGUAGES[extensionOf(filename)] ?? null;
}

export interface RendererHints {
  /** `metadata.type === 'transcript'` (open pages only). */
  transcript?: boolean;
}

function byType(t: string): RendererKind {
  if (t === 'text/html') return 'html';
  if (t === 'text/markdown' || t === 'text/x-markdown') return 'markdown';
  if (t.startsWith('image/')) return 'image';
  if (NDJSON_TYPES.has(t)) return 'transcript';
  if (t === 'application/json' || t === 'text/json' || t.endsWith('+json')) return 'json';
  if (CSV_TYPES.has(t)) return 'csv';
  if (t.startsWith('text/') || TEXT_TYPES.has(t)) return 'text';
  // application/xhtml+xml included: it counts as HTML for passwords but renders as a download card.
  return 'download';
}

/** Open pages only: what the filename says when the stored type says nothing readable. */
function byName(filename: string): RendererKind | null {
  const ext = extensionOf(filename);
  if (ext === 'ndjson' || ext === 'jsonl') return 'transcript';
  if (ext === 'json') return 'json';
  if (ext === 'csv' || ext === 'tsv') return 'csv';
  if (ext === 'txt' || ext === 'log' || ext === 'text' || ext === 'out') return 'text';
  return null;
}

export function chooseRenderer(
  contentType: string,
  filename: string,
  gated: boolean,
  hints: RendererHints = {},
): RendererKind {
  // "Whatever the stored type": on an open page the filename wins, even over text/html.
  if (!gated && /\.(md|markdown)$/i.test(filename)) return 'markdown';
  const t = essence(contentType);
  const kind = byType(t);
  if (gated || kind === 'html' || kind === 'image' || kind === 'markdown') return kind;
  if (hints.transcript) return 'transcript';
  if (codeLanguage(filename)) return 'code';
  if (kind === 'download' || kind === 'text') return byName(filename) ?? kind;
  return kind;
}
