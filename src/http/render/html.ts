/**
 * A tiny HTML template helper: every interpolated value is escaped unless it is already `SafeHtml`
 * (the result of another `html` template or of `trustedHtml`). Arrays are joined; null, undefined
 * and false render as nothing, so optional fragments can be written `${cond && html`…`}`.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | null | undefined | false | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function renderValue(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += renderValue(values[i] as HtmlValue) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Marks HTML produced by a trusted renderer (the Markdown sanitizer, our own CSS) as safe. */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
