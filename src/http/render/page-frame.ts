import { type HtmlValue, html, type SafeHtml, trustedHtml } from './html.js';

/**
 * The one frame of every HTML page Cairn writes: the viewer's shells and notices, the content
 * origin's rendered documents, the dashboard. Each is UTF-8, fits a phone's width, is kept out of
 * search engines (noindex) and sends no Referer (a page's URL may carry a content token). What
 * differs is passed in: the head's extra tags (link-preview tags, a stylesheet link), an inline
 * style sheet, and the body.
 */
export interface PageFrameParts {
  title: string;
  body: HtmlValue;
  /** Extra tags for the head, after the title. */
  head?: HtmlValue;
  /** An inline style sheet (our own CSS, never stored data). */
  css?: string;
}

export function pageFrame({ title, body, head, css }: PageFrameParts): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
${head}
${css !== undefined && html`<style>${trustedHtml(css)}</style>`}
</head>
<body>
${body}
</body>
</html>
`;
}
