import { createHash } from 'node:crypto';
import { SHELL_CSS } from '../viewer/styles.js';

/**
 * The dashboard's stylesheet: the viewer's look plus tables, bars and navigation. Served as a
 * file from the API origin so the pages' CSP can say `style-src 'self'` (no inline style at all).
 */
export const DASHBOARD_CSS = `${SHELL_CSS}
.nav{display:flex;gap:.25rem;flex-wrap:wrap}
.nav a{padding:.4rem .7rem;border-radius:8px;text-decoration:none;color:var(--fg)}
.nav a[aria-current="page"]{background:var(--bg);font-weight:600}
.topbar{flex-wrap:wrap;row-gap:.5rem}
.topbar form{margin:0}
.topbar form .btn{margin:0}
.page{padding:1.25rem 1.5rem;max-width:72rem;width:100%;margin:0 auto;display:flex;flex-direction:column;gap:1.25rem}
.page h1{margin:0;font-size:1.35rem}
.panel.pad{padding:1.1rem 1.25rem}
.panel h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 .75rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem}
.usage{display:flex;flex-direction:column;gap:.35rem}
.usage .figures{display:flex;justify-content:space-between;font-size:.9rem}
.bar{width:100%;height:.6rem;border-radius:999px}
.bar::-webkit-meter-bar{background:var(--bg);border:1px solid var(--line);border-radius:999px}
table{width:100%;border-collapse:collapse;font-size:.9rem}
th,td{text-align:left;padding:.55rem .6rem;border-bottom:1px solid var(--line);vertical-align:middle;overflow-wrap:break-word}
th{font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);white-space:nowrap}
.table-scroll{overflow-x:auto;max-width:100%}
.table-scroll td{white-space:nowrap}
.table-scroll .fields td{white-space:normal}
.fields td{overflow-wrap:anywhere;min-width:12rem}
.nowrap{white-space:nowrap}
.page p,.page li{overflow-wrap:anywhere}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere}
pre.snippet,pre.preview{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8rem;background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:.75rem;overflow:auto;max-width:100%;margin:.4rem 0}
pre.preview{max-height:24rem;white-space:pre-wrap;overflow-wrap:anywhere}
img.preview{max-width:100%;height:auto;border-radius:6px}
div.preview{max-height:24rem;overflow:auto;border:1px solid var(--line);border-radius:8px;padding:.75rem;margin:.4rem 0;background:var(--bg);overflow-wrap:anywhere}
.preview.md>:first-child{margin-top:0}.preview.md img{max-width:100%}
.preview.md pre,.preview pre{background:var(--panel,transparent);border:1px solid var(--line);border-radius:6px;padding:.5rem;overflow:auto;white-space:pre-wrap}
.preview.md table{border-collapse:collapse;display:block;overflow:auto}.preview.md th,.preview.md td{border:1px solid var(--line);padding:.25rem .5rem}
.preview .turns{display:flex;flex-direction:column;gap:.5rem}
.preview .turn{border:1px solid var(--line);border-radius:8px;padding:.4rem .6rem}
.preview .turn header{display:flex;gap:.6rem;font-size:.8rem;color:var(--muted)}
.preview .turn .role{font-weight:700;text-transform:capitalize}
.preview .turn .text{white-space:pre-wrap;margin:.25rem 0}.preview .turn .text.md{white-space:normal}
.steps{margin:0;padding-left:1.25rem;display:flex;flex-direction:column;gap:.5rem}
.inline-form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:0 0 .75rem}
.inline-form label{margin:0}
.inline-form select{width:auto}
.inline-form .btn{margin:0}
@media (max-width:40rem){.topbar{padding:.65rem 1rem;gap:.5rem}.topbar h1{display:none}.page{padding:1rem .75rem}.panel.pad{padding:.9rem}.center .panel{padding:1.25rem}}
td form{display:inline;margin:0}
td form .btn,.actions form .btn{margin:0}
.actions{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center}
.btn.small{padding:.3rem .65rem;font-size:.85rem}
.btn.danger{background:var(--danger);color:#fff}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;padding:.6rem .75rem;background:var(--bg);border:1px dashed var(--accent);border-radius:8px;overflow-wrap:anywhere;user-select:all}
.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.5rem .75rem;align-items:end}
.filters label{margin:0 0 .2rem}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:999px;font-size:.75rem;font-weight:700;background:var(--bg);border:1px solid var(--line)}
.badge.warn{color:var(--danger);border-color:var(--danger)}
.tiers{border:0;padding:0;margin:.5rem 0 0;display:flex;flex-direction:column;gap:.5rem}
.tiers label{display:flex;gap:.6rem;align-items:flex-start;font-weight:400;margin:0;padding:.65rem .75rem;border:1px solid var(--line);border-radius:8px;cursor:pointer}
.tiers input{width:auto;margin-top:.25rem}
.tiers small{display:block;color:var(--muted)}
.type-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:.4rem .6rem}
.tiers label.check{padding:.35rem .6rem;align-items:center}
.tiers label.check input{margin-top:0}
.center .panel.wide{max-width:34rem}
.publish{display:flex;flex-direction:column;gap:.5rem;max-width:36rem}
.publish label{margin:0 0 .2rem}
.tiers legend{font-size:.85rem;font-weight:600;padding:0;margin-bottom:.3rem}
.muted{color:var(--muted)}
`;

export const DASHBOARD_CSS_PATH = `/dashboard/assets/style-${createHash('sha256').update(DASHBOARD_CSS).digest('hex').slice(0, 12)}.css`;
