import { type HtmlValue, html, type SafeHtml, trustedHtml } from './html.js';

/**
 * The frame of every document the content origin renders (Markdown, text previews): no referrer,
 * noindex, our own stylesheet, and the body inside one `<main>`.
 */
export function contentDocument(title: string, css: string, main: HtmlValue): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<style>${trustedHtml(css)}</style>
</head>
<body><main>
${main}
</main></body>
</html>
`;
}
