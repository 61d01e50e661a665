import { escapeHtml, type SafeHtml, trustedHtml } from '../html.js';
import { renderMarkdown } from '../markdown.js';
import { clip, OutputBudget, PREVIEW_MAX_ROWS } from './budget.js';
import { renderJsonWithin, stringifyOrNote } from './json.js';
import { eachLine, renderText } from './text.js';

/**
 * Agent transcripts as a conversation: Claude Code's session JSONL (user and assistant turns with
 * text, thinking, tool use and tool results) and chat messages of the OpenAI shape (`role`,
 * `content`, `tool_calls`). Each turn shows its model and time when the record has them; tool
 * calls, tool results and thinking fold. Anything else is one pretty record per line. All text is
 * escaped; nothing of a record becomes markup.
 */

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

interface Part {
  kind: 'text' | 'thinking' | 'tool_call' | 'tool_result';
  text?: string;
  name?: string;
  input?: unknown;
  error?: boolean;
}

interface Turn {
  role: string;
  model: string | null;
  time: string | null;
  parts: Part[];
}

const CHAT_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** Claude Code writes one record per event: user/assistant turns and bookkeeping records. */
function isClaudeCode(r: Rec): boolean {
  return (
    typeof r.type === 'string' && (isRec(r.message) || typeof r.sessionId === 'string' || typeof r.uuid === 'string')
  );
}

function isChatMessage(r: Rec): boolean {
  return typeof r.role === 'string' && CHAT_ROLES.has(r.role) && ('content' in r || 'tool_calls' in r);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === 'string' ? b : isRec(b) ? (str(b.text) ?? (b.type === 'image' ? '[image]' : '')) : ''))
      .filter((t) => t !== '')
      .join('\n');
  }
  return content === null || content === undefined ? '' : stringifyOrNote(content);
}

/** Tool arguments arrive as an object (Claude) or a JSON string (OpenAI); show them as JSON either way. */
function argumentsOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function blocksOf(content: unknown): Part[] {
  if (!Array.isArray(content)) {
    const text = textOf(content);
    return text ? [{ kind: 'text', text }] : [];
  }
  const parts: Part[] = [];
  for (const b of content) {
    if (!isRec(b)) {
      if (typeof b === 'string') parts.push({ kind: 'text', text: b });
      continue;
    }
    switch (b.type) {
      case 'thinking':
      case 'redacted_thinking':
        parts.push({ kind: 'thinking', text: str(b.thinking) ?? '[redacted]' });
        break;
      case 'tool_use':
      case 'server_tool_use':
        parts.push({ kind: 'tool_call', name: str(b.name) ?? 'tool', input: b.input });
        break;
      case 'tool_result':
        parts.push({ kind: 'tool_result', text: textOf(b.content), error: b.is_error === true });
        break;
      case 'image':
        parts.push({ kind: 'text', text: '[image]' });
        break;
      default: {
        const text = str(b.text);
        if (text) parts.push({ kind: 'text', text });
      }
    }
  }
  return parts;
}

function timeOf(r: Rec): string | null {
  const t = r.timestamp ?? r.created_at ?? r.time;
  if (typeof t === 'string' && t !== '') return t;
  const created = r.created ?? t;
  if (typeof created === 'number' && Number.isFinite(created)) {
    const d = new Date(created > 1e12 ? created : created * 1000);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  return null;
}

function claudeTurn(r: Rec): Turn | null {
  const m = r.message;
  if (!isRec(m)) return null;
  const parts = blocksOf(m.content);
  const onlyResults = parts.length > 0 && parts.every((p) => p.kind === 'tool_result');
  const role = onlyResults ? 'tool' : (str(m.role) ?? str(r.type) ?? 'event');
  const model = str(m.model);
  return { role, model: model === '<synthetic>' ? null : model, time: timeOf(r), parts };
}

function chatTurn(r: Rec, model: string | null, time: string | null): Turn {
  const parts = blocksOf(r.content);
  const role = r.role as string;
  if (role === 'tool' || role === 'function') {
    const text = parts.map((p) => p.text ?? '').join('\n');
    const name = str(r.name);
    return { role: 'tool', model, time, parts: [{ kind: 'tool_result', text, name: name ?? undefined }] };
  }
  if (Array.isArray(r.tool_calls)) {
    for (const call of r.tool_calls) {
      if (!isRec(call)) continue;
      const fn = isRec(call.function) ? call.function : call;
      parts.push({ kind: 'tool_call', name: str(fn.name) ?? 'tool', input: argumentsOf(fn.arguments) });
    }
  }
  const reasoning = str(r.reasoning_content) ?? str(r.reasoning);
  if (reasoning) parts.unshift({ kind: 'thinking', text: reasoning });
  return { role, model: str(r.model) ?? model, time: timeOf(r) ?? time, parts };
}

export type Entry = { turn: Turn } | { record: unknown } | { raw: string };

/** What a JSON value's text can start with; a line that starts otherwise is not parsed at all. */
const JSON_START = /^\s*[[{"\d\-tfn]/;

/**
 * The non-empty lines of NDJSON, each parsed or kept as text: as many as a preview can show
 * (PREVIEW_MAX_ROWS), so that a file of a million short lines costs no million parses.
 */
function lineRecords(text: string): ({ value: unknown } | { raw: string })[] {
  const records: ({ value: unknown } | { raw: string })[] = [];
  for (const line of eachLine(text)) {
    if (line.trim() === '') continue;
    if (records.length === PREVIEW_MAX_ROWS) break;
    if (!JSON_START.test(line)) {
      records.push({ raw: line });
      continue;
    }
    try {
      records.push({ value: JSON.parse(line) });
    } catch {
      records.push({ raw: line });
    }
  }
  return records;
}

/**
 * Reads the records of a transcript: NDJSON lines, or one JSON array of messages, or an object
 * with a `messages` array. Returns null when the lines do not look like a transcript.
 */
export function readTranscript(text: string): Entry[] | null {
  const records: ({ value: unknown } | { raw: string })[] = [];
  const whole = text.trimStart();
  let parsedWhole: unknown;
  if (whole.startsWith('[') || whole.startsWith('{')) {
    try {
      parsedWhole = JSON.parse(whole);
    } catch {
      parsedWhole = undefined;
    }
  }
  if (Array.isArray(parsedWhole)) for (const v of parsedWhole) records.push({ value: v });
  else if (isRec(parsedWhole) && Array.isArray(parsedWhole.messages)) {
    for (const v of parsedWhole.messages) records.push({ value: v });
  } else {
    records.push(...lineRecords(text));
  }
  let recognised = 0;
  const entries: Entry[] = [];
  for (const r of records) {
    if ('raw' in r) {
      entries.push(r);
      continue;
    }
    const v = r.value;
    if (isRec(v) && isClaudeCode(v)) {
      recognised++;
      const turn = claudeTurn(v);
      entries.push(turn ? { turn } : { record: v });
    } else if (isRec(v) && isChatMessage(v)) {
      recognised++;
      entries.push({ turn: chatTurn(v, null, null) });
    } else if (isRec(v) && Array.isArray(v.choices)) {
      // A chat completion response: its messages, with the response's model and time.
      const model = str(v.model);
      const time = timeOf(v);
      let any = false;
      for (const c of v.choices) {
        if (isRec(c) && isRec(c.message) && isChatMessage(c.message)) {
          entries.push({ turn: chatTurn(c.message, model, time) });
          any = true;
        }
      }
      if (any) recognised++;
      else entries.push({ record: v });
    } else {
      entries.push({ record: v });
    }
  }
  return recognised > 0 && recognised * 2 >= records.length ? entries : null;
}

/**
 * Folding markup is about ten times the JSON it shows: a tool call's arguments, or a bookkeeping
 * record, fold when that stays this small, else they are shown as indented text.
 */
const FOLD_MAX_CHARS = 256 * 1024;

function jsonHtml(value: unknown): string {
  return (
    renderJsonWithin(value, FOLD_MAX_CHARS)?.value ??
    `<pre class="json">${escapeHtml(clip(stringifyOrNote(value, 2)))}</pre>`
  );
}

/**
 * `2026-11-22 08:00:03 UTC` for an ISO time (the exact value stays in `datetime`); anything else
 * as it came.
 */
export function readableTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * An assistant's text is Markdown (bold, lists, tables): rendered and sanitised as Markdown pages
 * are, without links or images, since a preview links nowhere and loads nothing.
 */
function partHtml(p: Part, role: string): string {
  const text = escapeHtml(clip(p.text ?? ''));
  switch (p.kind) {
    case 'text':
      return role === 'assistant'
        ? `<div class="text md">${renderMarkdown(clip(p.text ?? ''), { inert: true })}</div>`
        : `<div class="text">${text}</div>`;
    case 'thinking':
      return `<details class="thinking"><summary>Thinking</summary><pre>${text}</pre></details>`;
    case 'tool_call':
      return `<details class="tool-call"><summary>Tool call · ${escapeHtml(p.name ?? 'tool')}</summary>${jsonHtml(p.input ?? null)}</details>`;
    case 'tool_result': {
      const label = `${p.error ? 'Tool error' : 'Tool result'}${p.name ? ` · ${escapeHtml(p.name)}` : ''}`;
      return `<details class="tool-result${p.error ? ' error' : ''}"><summary>${label}</summary><pre>${text}</pre></details>`;
    }
  }
}

function turnHtml(t: Turn): string {
  const role = escapeHtml(t.role);
  const cls = ['user', 'assistant', 'tool', 'system', 'developer'].includes(t.role) ? t.role : 'system';
  const model = t.model ? `<span class="model">${escapeHtml(t.model)}</span>` : '';
  const time = t.time ? `<time datetime="${escapeHtml(t.time)}">${escapeHtml(readableTime(t.time))}</time>` : '';
  const parts = t.parts.map((p) => partHtml(p, t.role)).join('');
  return `<article class="turn ${cls}"><header><span class="role">${role}</span>${model}${time}</header>${parts}</article>`;
}

function recordHtml(e: { record: unknown } | { raw: string }): string {
  if ('raw' in e) return `<div class="record"><pre>${escapeHtml(clip(e.raw))}</pre></div>`;
  return `<div class="record"><pre>${escapeHtml(clip(stringifyOrNote(e.record, 2)))}</pre></div>`;
}

function entryHtml(e: Entry): string {
  if ('turn' in e) return e.turn.parts.length > 0 || e.turn.role !== 'event' ? turnHtml(e.turn) : '';
  // Bookkeeping records of a recognised transcript (summaries, snapshots) fold away.
  if ('record' in e) {
    const r = e.record;
    const type = isRec(r) && typeof r.type === 'string' ? r.type : 'record';
    // Claude Code's session title record says what the session was about: shown in its label.
    const label = isRec(r) && type === 'summary' && typeof r.summary === 'string' ? `Summary: ${r.summary}` : type;
    return `<details class="turn system event"><summary>${escapeHtml(label)}</summary>${jsonHtml(r)}</details>`;
  }
  return recordHtml(e);
}

/** The HTML of each item, in order, as far as `budget` takes it: no item past the first that does not fit is rendered. */
function within<T>(items: readonly T[], html: (item: T) => string, budget: OutputBudget): string {
  const out: string[] = [];
  for (const item of items) {
    const piece = html(item);
    if (piece === '') continue;
    if (!budget.take(piece)) break;
    out.push(piece);
  }
  return out.join('');
}

/** A conversation view when the text is a recognised transcript, else one pretty record per line. */
export function renderTranscript(text: string, budget = new OutputBudget()): SafeHtml {
  const entries = readTranscript(text);
  if (entries === null) return renderRecords(text, budget);
  return trustedHtml(`<div class="turns transcript">${within(entries, entryHtml, budget)}</div>`);
}

/**
 * NDJSON that is not a conversation: each line pretty-printed, invalid lines shown as text. A file
 * with no JSON line at all (a plain-text transcript) is shown as text.
 */
export function renderRecords(text: string, budget = new OutputBudget()): SafeHtml {
  const entries = lineRecords(text).map((r) => ('raw' in r ? r : { record: r.value }));
  if (!entries.some((e) => 'record' in e)) return renderText(text, budget);
  return trustedHtml(`<div class="records">${within(entries, recordHtml, budget)}</div>`);
}
