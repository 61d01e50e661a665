/**
 * Shell layout for pages shown in a frame (Markdown, HTML and the text previews). A frame cannot
 * take its content's height without script (the shell and the content run none; `frame-sizing`
 * needs the embedded page to opt in and is not applied by Chromium 156), so the shell never
 * scrolls: the frame fills the window below the bar, and its own scroll is the page's only one,
 * on desktop and phone. The side panels (receipt, share, report) sit in a `<details>` that is
 * always open on wide screens and a one-line bar above the frame on narrow ones.
 */
export const PREVIEW_SHELL_CSS = `
.about{display:block}
.about>summary{display:none}
.about::details-content{content-visibility:visible;display:flex;flex-direction:column;gap:1rem}
.share input{font:.8rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.expiry{color:var(--muted);font-size:.85rem;margin:.75rem 0 0}
body:has(.layout.framed){height:100vh;height:100dvh;min-height:0;overflow:hidden}
.layout.framed{min-height:0;grid-template-rows:minmax(0,1fr)}
.layout.framed .content{display:flex;flex-direction:column;min-height:0}
.layout.framed .frame{flex:1;height:auto;min-height:0}
.layout.framed .side{overflow:auto;min-height:0}
@media (max-width:60rem){
.layout.framed{display:flex;flex-direction:column;gap:.6rem;padding:.6rem}
.layout.framed .about{order:-1;flex:none;background:var(--panel);border:1px solid var(--line);border-radius:12px;overflow:visible}
.layout.framed .about>summary{display:block;padding:.55rem .9rem}
.layout.framed .about:not([open])::details-content{content-visibility:hidden;display:none}
.layout.framed .about[open]{max-height:60dvh;overflow:auto;padding-bottom:.6rem}
.layout.framed .about[open]::details-content{padding:0 .6rem}
.layout.framed .content{flex:1}
body:has(.layout.framed)>footer{padding:.3rem 1rem;font-size:.7rem}
.topbar{padding:.6rem .9rem;gap:.6rem}
}
`;
