/** The viewer shell's stylesheet: system fonts, light and dark, no external resources. */
export const SHELL_CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--panel:#fff;--fg:#1b1f24;--muted:#5c6570;--line:#dde1e6;--accent:#2457c5;--accent-fg:#fff;--danger:#b42318;--ok:#1a7f37;--shadow:0 1px 2px rgba(16,24,40,.06),0 1px 3px rgba(16,24,40,.08)}
@media (prefers-color-scheme:dark){:root{--bg:#0e1116;--panel:#161b22;--fg:#e6edf3;--muted:#9aa4af;--line:#2d333b;--accent:#5b8def;--accent-fg:#0b0f14;--danger:#f47067;--ok:#57ab5a;--shadow:none}}
*{box-sizing:border-box}
html,body{margin:0}
body{background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;min-height:100vh;display:flex;flex-direction:column}
a{color:var(--accent)}
.topbar{display:flex;align-items:center;gap:1rem;padding:.85rem 1.5rem;background:var(--panel);border-bottom:1px solid var(--line)}
.brand{font-weight:700;letter-spacing:.02em;color:var(--muted);font-size:.85rem;text-transform:uppercase}
.topbar h1{flex:1;margin:0;font-size:1.15rem;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.btn{display:inline-flex;align-items:center;gap:.4rem;padding:.5rem .95rem;border-radius:8px;border:1px solid transparent;background:var(--accent);color:var(--accent-fg);font:inherit;font-weight:600;text-decoration:none;cursor:pointer;white-space:nowrap}
.btn:hover{filter:brightness(1.08)}
.btn.secondary{background:transparent;color:var(--fg);border-color:var(--line)}
.layout{flex:1;display:grid;grid-template-columns:minmax(0,1fr) 19rem;gap:1.25rem;padding:1.25rem 1.5rem;max-width:90rem;width:100%;margin:0 auto}
@media (max-width:60rem){.layout{grid-template-columns:minmax(0,1fr)}}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:12px;box-shadow:var(--shadow)}
.frame{display:block;width:100%;height:calc(100vh - 9rem);min-height:24rem;border:0;border-radius:12px;background:#fff}
.markdown-frame{background:var(--panel)}
.image{margin:0;padding:1rem;display:flex;justify-content:center;align-items:center;min-height:16rem}
.image img{max-width:100%;max-height:calc(100vh - 11rem);height:auto;border-radius:6px;background:repeating-conic-gradient(#8881 0 25%,transparent 0 50%) 0 0/20px 20px}
.card{padding:2.5rem 2rem;text-align:center}
.card .name{font-size:1.2rem;font-weight:600;overflow-wrap:anywhere;margin:.25rem 0}
.card .meta{color:var(--muted);margin:0 0 1.5rem}
.side{display:flex;flex-direction:column;gap:1rem;min-width:0}
.side section,.side details{padding:1rem 1.1rem}
.side h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 .75rem}
dl{margin:0;display:grid;gap:.65rem}
dt{font:600 .75rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--muted)}
dd{margin:.1rem 0 0;overflow-wrap:anywhere;font-size:.9rem}
dd.hash{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.78rem}
.note{color:var(--muted);font-size:.8rem;margin:.85rem 0 0}
summary{cursor:pointer;font-weight:600}
label{display:block;font-size:.85rem;font-weight:600;margin:.75rem 0 .3rem}
select,textarea,input{width:100%;font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:.5rem .6rem}
textarea{min-height:5.5rem;resize:vertical}
form .btn{margin-top:.85rem}
.center{flex:1;display:flex;align-items:center;justify-content:center;padding:2rem 1rem}
.center .panel{width:100%;max-width:26rem;padding:2rem}
.center h1{font-size:1.3rem;margin:0 0 .4rem}
.center p{color:var(--muted);margin:0 0 1rem}
.error,.center p.error{color:var(--danger);font-weight:600}
.success,.center p.success{color:var(--ok);font-weight:600}
footer{padding:.8rem 1.5rem;color:var(--muted);font-size:.8rem;text-align:center}
`;
