import MarkdownIt, { type StateCore, type Token } from 'markdown-it';

/**
 * Markdown → HTML that is safe to show to anyone (spec: "Sanitized Markdown. Images only over HTTPS
 * or `data:`. Links only `https:` and `mailto:`").
 *
 * Layers, each sufficient on its own for what it covers:
 * - `html: false`: raw HTML in the source is never parsed as HTML, only shown as text; the
 *   `html_*` renderer rules escape their content anyway, should a token ever appear.
 * - A core rule run after parsing rebuilds every link and image token from an allowlist of
 *   attributes (no event handlers, no style) and drops links/images whose URL is not allowed: an
 *   unsafe link keeps its text, an unsafe image shows its alt text.
 * - URLs are checked exactly as the browser will read them (the attribute value after HTML
 *   decoding) and again after entity/backslash decoding, with whitespace and control characters
 *   removed, lower-cased, and with the WHATWG URL parser; every check must say yes.
 */

/** `data:` images allowed inline; never SVG (it can carry script), never other types. */
const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp|avif)(;base64)?,/;
const LINK_SCHEMES = new Set(['https:', 'mailto:']);
const LINK_REL = 'noopener noreferrer nofollow';

/** The scheme as a lenient reader would see it: no whitespace or control characters, lower case. */
function looseScheme(url: string): string | null {
  const compact = url.replace(/[\s\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\ufeff]/g, '').toLowerCase();
  const m = /^([a-z][a-z0-9+.-]*):/.exec(compact);
  return m ? `${m[1]}:` : null;
}

function parsedProtocol(url: string): string | null {
  try {
    return new URL(url).protocol;
  } catch {
    return null;
  }
}

/** Every reading of `url` (as written, entity-decoded) must agree on an allowed scheme. */
function readings(url: string): string[] {
  const decoded = md.utils.unescapeAll(url);
  return decoded === url ? [url] : [url, decoded];
}

export function isSafeLinkUrl(url: string): boolean {
  return readings(url).every((u) => {
    const loose = looseScheme(u);
    const parsed = parsedProtocol(u);
    if (!loose || !LINK_SCHEMES.has(loose) || parsed !== loose) return false;
    // https needs a real host: `https:javascript:…` or `https:///x` are not links we vouch for.
    return loose !== 'https:' || /^https:\/\/[^/?#\s]/i.test(u.trim());
  });
}

export function isSafeImageUrl(url: string): boolean {
  return readings(url).every((u) => {
    const loose = looseScheme(u);
    const parsed = parsedProtocol(u);
    if (loose === 'https:') return parsed === 'https:' && /^https:\/\/[^/?#\s]/i.test(u.trim());
    // The data: check runs on the exact, untrimmed text: no whitespace tricks in the media type.
    return loose === 'data:' && parsed === 'data:' && DATA_IMAGE.test(u.toLowerCase());
  });
}

/**
 * A relative reference (`chart.png`, `./data.csv`, `chart%20v2.png#top`) as the name of an artifact
 * stored beside the page (render option `relativeBase`), or null. Only a bare filename: no scheme,
 * no host, no path (`/`, `\\`, `..`), no controls; the query and fragment are dropped. Every
 * reading of the reference (as written, entity-decoded) must give the same name.
 */
export function relativeArtifactName(url: string): string | null {
  const names = readings(url).map((u) => {
    if (looseScheme(u) !== null || /^[\s/\\?#]/.test(u)) return null;
    let path = u.split(/[?#]/)[0] ?? '';
    while (path.startsWith('./')) path = path.slice(2);
    let name: string;
    try {
      name = decodeURIComponent(path);
    } catch {
      return null;
    }
    if (name === '' || name === '.' || name === '..' || name.length > 255) return null;
    return /[/\\\u0000-\u001f\u007f-\u009f]/.test(name) ? null : name;
  });
  const [first] = names;
  return first && names.every((n) => n === first) ? first : null;
}

/** What the sanitizer is given in markdown-it's `env`. */
export interface RenderEnv {
  /**
   * No links and no images at all (link text and alt text stay): for Markdown inside a preview
   * document (a transcript's turns), which loads nothing and links nowhere.
   */
  inert?: boolean;
  /** Where references to artifacts beside the page go: `${relativeBase}${encoded name}`; unset, they stay unresolved. */
  relativeBase?: string;
}

function relativeUrl(url: string, env: RenderEnv): string | null {
  if (env.relativeBase === undefined) return null;
  const name = relativeArtifactName(url);
  return name === null ? null : `${env.relativeBase}${encodeURIComponent(name)}`;
}

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

// Let the parser accept every destination so that our rule below decides (and can keep link text);
// markdown-it's own validateLink would leave an unsafe link as literal source text instead.
md.validateLink = () => true;

/** Linkified bare domains (`www.example.com`) become https, not http. */
function upgradeFuzzyLink(token: Token, text: string): void {
  const href = token.attrGet('href') ?? '';
  if (token.markup === 'linkify' && !/^[a-z][a-z0-9+.-]*:/i.test(text) && href.startsWith('http://')) {
    token.attrSet('href', `https://${href.slice('http://'.length)}`);
  }
}

function sanitizeInline(children: Token[], state: StateCore): Token[] {
  const out: Token[] = [];
  // One entry per open link: whether it was dropped (so its close is dropped too).
  const openLinks: boolean[] = [];
  for (let i = 0; i < children.length; i++) {
    const t = children[i] as Token;
    if (t.type === 'link_open') {
      upgradeFuzzyLink(t, children[i + 1]?.content ?? '');
      const env = state.env as RenderEnv;
      const written = t.attrGet('href') ?? '';
      const href = env.inert ? null : isSafeLinkUrl(written) ? written : relativeUrl(written, env);
      const title = t.attrGet('title');
      openLinks.push(href === null);
      if (href === null) continue;
      t.attrs = [['href', href]];
      if (title) t.attrs.push(['title', title]);
      t.attrs.push(['rel', LINK_REL], ['target', '_blank']);
      out.push(t);
    } else if (t.type === 'link_close') {
      if (!openLinks.pop()) out.push(t);
    } else if (t.type === 'image') {
      const env = state.env as RenderEnv;
      const written = t.attrGet('src') ?? '';
      const src = env.inert ? null : isSafeImageUrl(written) ? written : relativeUrl(written, env);
      const alt = md.renderer.renderInlineAsText(t.children ?? [], md.options, state.env);
      if (src === null) {
        const text = new state.Token('text', '', 0);
        text.content = alt;
        out.push(text);
        continue;
      }
      const title = t.attrGet('title');
      t.attrs = [
        ['src', src],
        ['alt', ''],
      ];
      if (title) t.attrs.push(['title', title]);
      t.attrs.push(['loading', 'lazy'], ['referrerpolicy', 'no-referrer']);
      out.push(t);
    } else {
      out.push(t);
    }
  }
  return out;
}

md.core.ruler.push('cairn_sanitize', (state) => {
  for (const token of state.tokens) {
    if (token.type === 'inline' && token.children) token.children = sanitizeInline(token.children, state);
  }
});

// With `html: false` these never appear; should one ever do, it is shown as text, not markup.
md.renderer.rules.html_block = (tokens, idx) => `<p>${md.utils.escapeHtml(tokens[idx]?.content ?? '')}</p>`;
md.renderer.rules.html_inline = (tokens, idx) => md.utils.escapeHtml(tokens[idx]?.content ?? '');

/** Safe HTML for a Markdown source (a fragment, to be placed inside a document body). */
export function renderMarkdown(source: string, options: RenderEnv = {}): string {
  return renderMarkdownWithin(source, Number.POSITIVE_INFINITY, options).html;
}

/**
 * The same, kept only as far as it fits in `maxBytes`: the markup of a hostile source can be five
 * times its size. Rendered token by token (markdown-it's own rules, in its own loop), it stops
 * before the first token that does not fit and closes whatever is open there (a list, a table),
 * so the HTML stays whole. `stopped` says that something was left out.
 */
export function renderMarkdownWithin(
  source: string,
  maxBytes: number,
  options: RenderEnv = {},
): { html: string; stopped: boolean } {
  const env: RenderEnv = { ...options };
  const tokens = md.parse(source.replace(/^\ufeff/, ''), env);
  const { rules } = md.renderer;
  const out: string[] = [];
  const open: Token[] = [];
  let size = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const rule = rules[t.type];
    const piece =
      t.type === 'inline'
        ? md.renderer.renderInline(t.children ?? [], md.options, env)
        : rule
          ? rule(tokens, i, md.options, env, md.renderer)
          : md.renderer.renderToken(tokens, i, md.options);
    size += Buffer.byteLength(piece);
    if (size > maxBytes) {
      const closing = open.reverse().map((o) => (o.tag && !o.hidden ? `</${o.tag}>\n` : ''));
      return { html: out.join('') + closing.join(''), stopped: true };
    }
    out.push(piece);
    if (t.nesting === 1) open.push(t);
    else if (t.nesting === -1) open.pop();
  }
  return { html: out.join(''), stopped: false };
}
