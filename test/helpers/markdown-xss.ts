/**
 * Markdown XSS payloads shared by the sanitizer's unit tests and the browser tests. A payload
 * that ever runs sets `window.__xss` (or opens a dialog); none may.
 */
export interface XssPayload {
  name: string;
  markdown: string;
}

const svgOnload = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="window.__xss=1"/>').toString('base64');
const htmlScript = Buffer.from('<script>window.__xss=1</script>').toString('base64');

export const MARKDOWN_XSS_PAYLOADS: XssPayload[] = [
  // Links with dangerous schemes, in every disguise.
  { name: 'javascript link', markdown: '[a](javascript:window.__xss=1)' },
  { name: 'mixed-case scheme', markdown: '[a](JaVaScRiPt:window.__xss=1)' },
  { name: 'decimal entity scheme', markdown: '[a](&#106;avascript:window.__xss=1)' },
  { name: 'hex entity scheme', markdown: '[a](&#x6A;avascript:window.__xss=1)' },
  { name: 'entity in the middle', markdown: '[a](javas&#99;ript:window.__xss=1)' },
  { name: 'named entity colon', markdown: '[a](javascript&colon;window.__xss=1)' },
  { name: 'entity tab in scheme', markdown: '[a](java&#x09;script:window.__xss=1)' },
  { name: 'entity newline in scheme', markdown: '[a](java&#x0A;script:window.__xss=1)' },
  { name: 'raw tab in pointy destination', markdown: '[a](<java\tscript:window.__xss=1>)' },
  { name: 'leading spaces in pointy destination', markdown: '[a](<   javascript:window.__xss=1>)' },
  { name: 'control character before scheme', markdown: '[a](\u0001javascript:window.__xss=1)' },
  { name: 'zero-width space in scheme', markdown: '[a](java\u200bscript:window.__xss=1)' },
  { name: 'backslash-escaped colon', markdown: '[a](javascript\\:window.__xss=1)' },
  { name: 'percent-encoded scheme', markdown: '[a](%6A%61%76%61%73%63%72%69%70%74:window.__xss=1)' },
  { name: 'destination on the next line', markdown: '[a](\njavascript:window.__xss=1)' },
  { name: 'link with title', markdown: '[a](javascript:window.__xss=1 "title")' },
  { name: 'vbscript link', markdown: '[a](vbscript:msgbox(1))' },
  { name: 'VBScript mixed case', markdown: '[a](VbScRiPt:msgbox(1))' },
  { name: 'data:text/html link', markdown: `[a](data:text/html;base64,${htmlScript})` },
  { name: 'data: link with inline script', markdown: '[a](data:text/html,<script>window.__xss=1</script>)' },
  { name: 'file link', markdown: '[a](file:///etc/passwd)' },
  { name: 'plain http link', markdown: '[a](http://example.com/)' },
  { name: 'protocol-relative link', markdown: '[a](//evil.example/)' },
  { name: 'https: without host', markdown: '[a](https:javascript:window.__xss=1)' },
  { name: 'reference-style link', markdown: '[a][r]\n\n[r]: javascript:window.__xss=1' },
  { name: 'reference with entity scheme', markdown: '[r2]\n\n[r2]: &#x6a;avascript:window.__xss=1 "t"' },
  { name: 'autolink javascript', markdown: '<javascript:window.__xss=1>' },
  { name: 'autolink upper case', markdown: '<JAVASCRIPT:window.__xss=1>' },
  { name: 'autolink vbscript', markdown: '<vbscript:msgbox(1)>' },
  { name: 'image inside javascript link', markdown: '[![i](https://example.com/i.png)](javascript:window.__xss=1)' },
  { name: 'quote breaking out of href', markdown: '[a](https://example.com/"onmouseover="window.__xss=1)' },
  { name: 'quote breaking out of title', markdown: '[a](https://example.com/ "t\\" onmouseover=\\"window.__xss=1")' },
  // Raw HTML: never markup.
  { name: 'script tag', markdown: '<script>window.__xss=1</script>' },
  { name: 'img onerror', markdown: '<img src=x onerror="window.__xss=1">' },
  { name: 'svg onload', markdown: '<svg onload="window.__xss=1"></svg>' },
  { name: 'iframe javascript', markdown: '<iframe src="javascript:window.__xss=1"></iframe>' },
  { name: 'iframe srcdoc', markdown: '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>' },
  { name: 'anchor tag', markdown: '<a href="javascript:window.__xss=1">x</a>' },
  { name: 'event attribute on div', markdown: '<div onmouseover="window.__xss=1">hover</div>' },
  { name: 'details ontoggle', markdown: '<details open ontoggle="window.__xss=1"><summary>x</summary></details>' },
  { name: 'body onload', markdown: '<body onload="window.__xss=1">' },
  { name: 'object data', markdown: `<object data="data:text/html;base64,${htmlScript}"></object>` },
  { name: 'meta refresh', markdown: '<meta http-equiv="refresh" content="0;url=javascript:window.__xss=1">' },
  { name: 'style import', markdown: "<style>@import 'https://evil.example/x.css';</style>" },
  { name: 'mXSS math/style', markdown: '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=1">' },
  { name: 'inline html in paragraph', markdown: 'hello <img src=x onerror="window.__xss=1"> world' },
  { name: 'html comment trick', markdown: '<!--><img src=x onerror="window.__xss=1">-->' },
  { name: 'fence info breaking out', markdown: '```"><img src=x onerror="window.__xss=1">\ncode\n```' },
  // Images.
  { name: 'svg data image (base64)', markdown: `![x](data:image/svg+xml;base64,${svgOnload})` },
  {
    name: 'svg data image (url-encoded)',
    markdown: '![x](data:image/svg+xml;utf8,%3Csvg%20onload%3Dwindow.__xss%3D1%3E)',
  },
  { name: 'svg data image upper case', markdown: `![x](DATA:IMAGE/SVG+XML;base64,${svgOnload})` },
  { name: 'javascript image', markdown: '![x](javascript:window.__xss=1)' },
  { name: 'http image', markdown: '![x](http://example.com/x.png)' },
  { name: 'data:text/html image', markdown: `![x](data:text/html;base64,${htmlScript})` },
  { name: 'alt breaking out', markdown: '![a" onerror="window.__xss=1](https://example.com/x.png)' },
  { name: 'reference-style svg image', markdown: `![x][img]\n\n[img]: data:image/svg+xml;base64,${svgOnload}` },
];

/** An independent reading of the rule: hrefs only https://host or mailto:. */
export function isAllowedHref(value: string): boolean {
  return /^https:\/\/[^/\s]/.test(value) || /^mailto:/.test(value);
}

/** Image sources only https://host or data: images of the five raster types. */
export function isAllowedSrc(value: string): boolean {
  return /^https:\/\/[^/\s]/.test(value) || /^data:image\/(png|jpeg|gif|webp|avif)(;base64)?,/.test(value);
}
