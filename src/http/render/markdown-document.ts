import { contentDocument } from './content-document.js';
import { html, type SafeHtml, trustedHtml } from './html.js';
import { type RenderEnv, renderMarkdownWithin } from './markdown.js';
import { PREVIEW_MAX_HTML_BYTES } from './preview/budget.js';

/** Readable defaults for rendered Markdown, light and dark; no web fonts, nothing fetched. */
const MARKDOWN_CSS = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--code:#f6f8fa;--link:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#3d444d;--code:#151b23;--link:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;overflow-wrap:anywhere}
main{max-width:48rem;margin:0 auto;padding:1.5rem 1.25rem 3rem}
h1,h2,h3,h4,h5,h6{line-height:1.25;margin:1.5em 0 .6em}
h1{font-size:1.9em;border-bottom:1px solid var(--line);padding-bottom:.3em}
h2{font-size:1.45em;border-bottom:1px solid var(--line);padding-bottom:.3em}
main>:first-child{margin-top:0}
a{color:var(--link)}
img{max-width:100%;height:auto}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.9em}
code{background:var(--code);padding:.15em .35em;border-radius:6px}
pre{background:var(--code);padding:1em;border-radius:8px;overflow:auto;line-height:1.45}
pre code{background:none;padding:0}
blockquote{margin:0;padding:0 1em;color:var(--muted);border-left:.25em solid var(--line)}
table{border-collapse:collapse;display:block;width:max-content;max-width:100%;overflow:auto}
th,td{border:1px solid var(--line);padding:.4em .8em;overflow-wrap:normal}
th{background:var(--code)}
hr{border:0;border-top:1px solid var(--line);margin:2em 0}
`;

/** The complete document the content origin serves for a Markdown page: as much as 4 MiB of HTML holds. */
export function markdownDocument(source: string, title: string, options: RenderEnv = {}): SafeHtml {
  const { html: body, stopped } = renderMarkdownWithin(source, PREVIEW_MAX_HTML_BYTES, options);
  return contentDocument(
    title,
    MARKDOWN_CSS,
    html`${trustedHtml(body)}${stopped && html`<p class="stopped" data-page-stopped><em>The page stops here: the rest of this document is in the download.</em></p>`}`,
  );
}
