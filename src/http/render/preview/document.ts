import { contentDocument } from '../content-document.js';
import { html, type SafeHtml } from '../html.js';

/**
 * The document the content origin serves for a text preview (text, code, JSON, CSV, transcript):
 * our own markup around escaped text, our own stylesheet, no script, nothing fetched.
 */
const PREVIEW_CSS = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--soft:#f6f8fa;--link:#0969da;
--add:#1a7f37;--add-bg:#dafbe1;--del:#cf222e;--del-bg:#ffebe9;--hunk:#8250df;--str:#0a3069;--num:#0550ae;--key:#953800;
--user:#ddf4ff;--assistant:#f6f8fa;--tool:#fff8c5;--err:#cf222e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#3d444d;--soft:#151b23;--link:#4493f8;
--add:#3fb950;--add-bg:#12261e;--del:#f85149;--del-bg:#25171c;--hunk:#bc8cff;--str:#a5d6ff;--num:#79c0ff;--key:#ffa657;
--user:#0c2d4b;--assistant:#151b23;--tool:#2e2a14;--err:#f85149}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{padding:1rem 1.25rem 2rem}
code,pre,.mono,.lines,.json{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:13px;line-height:1.5}
.note{margin:0 0 1rem;padding:.6rem .8rem;border:1px solid var(--line);border-radius:8px;background:var(--soft);color:var(--muted);font-size:.875rem}
.lines{counter-reset:ln;white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.l{display:block;position:relative;padding-left:4.25rem;min-height:1.5em}
.l::before{counter-increment:ln;content:counter(ln);position:absolute;left:0;width:3.25rem;text-align:right;color:var(--muted);user-select:none;-webkit-user-select:none}
.ctl{color:var(--muted)}
.l.gap{color:var(--muted);font-style:italic}
.l.gap::before{counter-increment:none;content:"⋯"}
.l.cont::before{counter-increment:none;content:""}
.note.more{margin:1rem 0 0}
@media (max-width:40rem){main{padding:.75rem .6rem 1.5rem}.l{padding-left:2.6rem}.l::before{width:2.1rem;font-size:11px}}
.ansi-b{font-weight:700}.ansi-d{opacity:.7}.ansi-i{font-style:italic}.ansi-u{text-decoration:underline}
.fg0{color:#57606a}.fg1{color:#cf222e}.fg2{color:#1a7f37}.fg3{color:#9a6700}.fg4{color:#0969da}.fg5{color:#8250df}.fg6{color:#1b7c83}.fg7{color:#6e7781}
.fg8{color:#8c959f}.fg9{color:#ff5a4f}.fg10{color:#2da44e}.fg11{color:#bf8700}.fg12{color:#218bff}.fg13{color:#a475f9}.fg14{color:#3192aa}.fg15{color:#8c959f}
@media (prefers-color-scheme:dark){.fg0{color:#8b949e}.fg1{color:#ff7b72}.fg2{color:#3fb950}.fg3{color:#d29922}.fg4{color:#58a6ff}.fg5{color:#bc8cff}.fg6{color:#39c5cf}.fg7{color:#b1bac4}}
.d-add{background:var(--add-bg);color:var(--add)}.d-del{background:var(--del-bg);color:var(--del)}.d-hunk{color:var(--hunk)}.d-meta{color:var(--muted);font-weight:600}
.hljs-comment,.hljs-quote{color:var(--muted);font-style:italic}
.hljs-keyword,.hljs-selector-tag,.hljs-built_in,.hljs-type,.hljs-literal{color:#cf222e}
.hljs-string,.hljs-regexp,.hljs-attr .hljs-string{color:var(--str)}
.hljs-number,.hljs-symbol{color:var(--num)}
.hljs-title,.hljs-section,.hljs-function .hljs-title{color:#8250df}
.hljs-attr,.hljs-attribute,.hljs-variable,.hljs-template-variable,.hljs-property{color:var(--key)}
.hljs-meta{color:#6639ba}.hljs-addition{color:var(--add)}.hljs-deletion{color:var(--del)}
@media (prefers-color-scheme:dark){.hljs-keyword,.hljs-selector-tag,.hljs-built_in,.hljs-type,.hljs-literal{color:#ff7b72}.hljs-title,.hljs-section{color:#d2a8ff}.hljs-meta{color:#a5d6ff}}
.json{white-space:pre-wrap;overflow-wrap:anywhere}
.json details{margin:0}
.json summary{cursor:pointer;list-style:none}
.json summary::-webkit-details-marker{display:none}
.json summary::before{content:"▾";display:inline-block;width:1em;color:var(--muted)}
.json details:not([open])>summary::before{content:"▸"}
.json .in{padding-left:1.5em;border-left:1px dotted var(--line);margin-left:.3em}
.json .k{color:var(--key)}.json .s{color:var(--str)}.json .n{color:var(--num)}.json .b,.json .z{color:#cf222e}
.json .c{color:var(--muted);font-style:italic}
main:has(>.tablewrap){height:100vh;display:flex;flex-direction:column}
.tablewrap{flex:1;min-height:0;overflow:auto;max-width:100%;border:1px solid var(--line);border-radius:8px}
table{border-collapse:separate;border-spacing:0;font-size:.875rem}
th,td{padding:.35rem .7rem;border-bottom:1px solid var(--line);border-right:1px solid var(--line);text-align:left;vertical-align:top;white-space:pre-wrap;max-width:32rem;overflow-wrap:break-word}
td:not(.rn){min-width:4rem}
thead th{position:sticky;top:0;background:var(--soft);font-weight:600;z-index:1}
td.rn,th.rn{color:var(--muted);text-align:right;font-variant-numeric:tabular-nums;background:var(--soft)}
.turns{display:flex;flex-direction:column;gap:.75rem;max-width:60rem;margin:0 auto}
.turn{border:1px solid var(--line);border-radius:10px;padding:.6rem .85rem;background:var(--assistant)}
.turn.user{background:var(--user)}.turn.tool{background:var(--tool)}.turn.system{background:var(--soft)}
.turn header{display:flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:baseline;font-size:.8rem;color:var(--muted);margin-bottom:.35rem}
.turn .role{font-weight:700;color:var(--fg);text-transform:capitalize}
.turn .text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0}
.turn .text.md{white-space:normal}
.text.md>:first-child{margin-top:0}.text.md>:last-child{margin-bottom:0}
.text.md p,.text.md ul,.text.md ol,.text.md pre,.text.md blockquote,.text.md table{margin:.45rem 0}
.text.md pre{padding:.5rem .7rem;border-radius:6px;background:var(--bg);overflow:auto;white-space:pre}
.text.md code{font-size:.9em}
.text.md table{border-collapse:collapse;display:block;overflow:auto;max-width:100%}
.text.md th,.text.md td{border:1px solid var(--line);padding:.25rem .5rem;white-space:normal;max-width:none;min-width:0}
.text.md blockquote{padding:0 .8rem;border-left:.2rem solid var(--line);color:var(--muted)}
.turn details{margin:.35rem 0;border:1px solid var(--line);border-radius:8px;background:var(--bg)}
.turn details>summary{cursor:pointer;padding:.3rem .6rem;font-size:.85rem;font-weight:600}
.turn details>pre,.turn details>.json{margin:0;padding:.5rem .7rem;border-top:1px solid var(--line);white-space:pre-wrap;overflow-wrap:anywhere}
.turn .error>summary{color:var(--err)}
.record{margin:0 0 .5rem}
.record>pre{margin:0;padding:.5rem .7rem;border:1px solid var(--line);border-radius:8px;background:var(--soft);white-space:pre-wrap;overflow-wrap:anywhere}
`;

/**
 * `stopped`: the preview reached its bound (budget.ts) before the end of what it read, and ends
 * with a card saying so.
 */
export function previewDocument(title: string, body: SafeHtml, note?: string | null, stopped = false): SafeHtml {
  return contentDocument(
    title,
    PREVIEW_CSS,
    html`${note && html`<p class="note" role="note">${note}</p>`}
${body}
${stopped && html`<p class="note more" role="note" data-preview-stopped>The preview stops here: it shows as much as a page can hold. Download the file to see all of it.</p>`}`,
  );
}
