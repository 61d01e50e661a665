/**
 * Whether a request's `Accept` asks for a web page rather than JSON: a browser opening a URL sends
 * `text/html,…,*\/*;q=0.8`, while curl, fetch() and the SDKs send `*\/*` or `application/json`. HTML
 * only when `text/html` (or XHTML) is named with a weight above 0 and at least that of
 * `application/json`; wildcards decide nothing.
 */
export function acceptsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  let htmlQ = 0;
  let jsonQ = 0;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/html' || type === 'application/xhtml+xml') htmlQ = Math.max(htmlQ, q);
    else if (type === 'application/json') jsonQ = Math.max(jsonQ, q);
  }
  return htmlQ > 0 && htmlQ >= jsonQ;
}
