import { type HtmlValue, html, type SafeHtml } from './html.js';
import { pageFrame } from './page-frame.js';

/** Every document the content origin renders (Markdown, text previews): the page frame, the body inside one `<main>`. */
export function contentDocument(title: string, css: string, main: HtmlValue): SafeHtml {
  return pageFrame({ title, css, body: html`<main>\n${main}\n</main>` });
}
