import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CairnError } from 'cairn-store-sdk';
import type { ZodError, ZodTypeAny } from 'zod';
import { withoutFinalPeriod } from '../shared/cairn-error.js';
import type { ToolDef } from './context.js';
import { PathRefusedError } from './paths.js';

/**
 * Tool results: a structured object plus the same JSON as text (for hosts that show only text).
 * Failures are `isError` results, never protocol errors, so the agent reads them and can act;
 * `_meta` carries `{status, code, retry_hint}` for programs.
 */

/**
 * What the agent should do next:
 * - `fix_arguments`: the request was wrong (400/404/409/413/415/…); change it, do not repeat it as is.
 * - `do_not_retry`: credentials, plan limits or a gone object (401/403/410); repeating cannot help.
 * - `retry_after`: rate limited; wait `_meta.retry_after_seconds`, then repeat.
 * - `retry_later`: the server failed on a call that is safe to repeat (already retried automatically).
 * - `verify_state`: a non-idempotent call failed in a way that may or may not have taken effect.
 */
export type RetryHint = 'fix_arguments' | 'do_not_retry' | 'retry_after' | 'retry_later' | 'verify_state';

export interface FailureMeta {
  status: number;
  code: string;
  retry_hint: RetryHint;
  [extra: string]: unknown;
}

export function ok(data: object, meta?: Record<string, unknown>): CallToolResult {
  const result: CallToolResult = {
    content: [{ type: 'text', text: JSON.stringify(data, null, 2) }],
    structuredContent: data as Record<string, unknown>,
  };
  if (meta) result._meta = meta;
  return result;
}

export function fail(message: string, meta: FailureMeta): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], _meta: meta };
}

export function invalid(message: string): CallToolResult {
  return fail(message, { status: 400, code: 'invalid_request', retry_hint: 'fix_arguments' });
}

/**
 * An argument error names each wrong argument with what it should be, lists the accepted names
 * when an unknown one was passed, and ends with a correct call of the tool to copy from.
 */
export function zodFailure(tool: ToolDef, err: ZodError): CallToolResult {
  const shape = tool.input.shape as Record<string, ZodTypeAny>;
  const accepted = Object.keys(shape);
  const issues = err.issues.map((i) => {
    if (i.code === 'unrecognized_keys') {
      const unknown = i.keys.map((k) => JSON.stringify(k)).join(', ');
      return `unknown argument ${unknown}; ${tool.name} takes ${accepted.join(', ')}`;
    }
    const field = i.path.length ? String(i.path[0]) : null;
    const where = i.path.length ? i.path.join('.') : 'arguments';
    const about = field !== null ? shape[field]?.description : undefined;
    // The regex rules already say what is expected and give an example; other messages get the description.
    const expected = about && !/e\.g\./.test(i.message) ? ` (expected: ${about})` : '';
    return `${where}: ${i.message}${expected}`;
  });
  return invalid(`Invalid arguments for ${tool.name}: ${issues.join('; ')}. ${exampleCall(tool)}`);
}

/** The sentence that ends every argument error: a call of the tool that is right. */
export function exampleCall(tool: ToolDef): string {
  return `Example of a correct call: ${tool.name} ${JSON.stringify(tool.example)}`;
}

export interface FailureContext {
  /** Last four characters of the API key, named in authentication failures. */
  keyHint?: string;
  /** The tool is not idempotent: a 5xx or network failure leaves its outcome unknown. */
  ambiguous?: { verify: string };
  /** Extra `_meta` fields to keep on failures too (store_artifact's idempotency key). */
  meta?: Record<string, unknown>;
  /** The call's arguments, echoed in not-found messages. */
  args?: Record<string, unknown>;
}

/** Maps anything a handler throws to a tool result an agent can act on. */
export function failureFrom(err: unknown, ctx: FailureContext = {}): CallToolResult {
  if (err instanceof PathRefusedError && err.reason === 'denied') {
    // A secret's file: not a wrong argument to fix, and not something to send another way.
    return fail(`${err.message} Do not send its contents another way unless the user explicitly asks for it.`, {
      status: 400,
      code: 'path_refused',
      retry_hint: 'do_not_retry',
      ...ctx.meta,
    });
  }
  if (err instanceof PathRefusedError) {
    return fail(err.message, { status: 400, code: 'path_refused', retry_hint: 'fix_arguments', ...ctx.meta });
  }
  if (!(err instanceof CairnError)) {
    const message = err instanceof Error ? err.message : String(err);
    return fail(`Unexpected failure: ${message}`, {
      status: 500,
      code: 'server_error',
      retry_hint: ctx.ambiguous ? 'verify_state' : 'retry_later',
      ...ctx.meta,
    });
  }
  const base = { status: err.status, code: err.code, ...ctx.meta };
  if (err.status >= 500 || err.status === 0) {
    if (ctx.ambiguous) {
      return fail(
        `The outcome is ambiguous: the request failed (${err.code}: ${withoutFinalPeriod(err.message)}) after it may have reached ` +
          `the server, so it may or may not have taken effect. Do NOT retry it. ${ctx.ambiguous.verify} ` +
          'If you cannot tell, escalate to the user.',
        { ...base, retry_hint: 'verify_state' },
      );
    }
    const key = typeof ctx.meta?.idempotency_key === 'string' ? ctx.meta.idempotency_key : null;
    const again =
      key === null
        ? 'It is safe to try again later.'
        : `It is safe to try again later with the same idempotency_key (${key}): a repeat with it never stores or ` +
          'reserves a second time, and returns what the first attempt made if it did reach Cairn.';
    return fail(`Cairn failed (${err.code}): ${sentence(err.message)} ${again}`, {
      ...base,
      retry_hint: 'retry_later',
    });
  }
  if (err.status === 401 && isSuspension(err)) {
    return fail(
      `Cairn refused the call: this account is suspended (${withoutFinalPeriod(err.message)}). The API key is fine; ` +
        'ask the user to contact the Cairn operator. Retrying will not help.',
      { ...base, retry_hint: 'do_not_retry' },
    );
  }
  if (err.status === 401) {
    const key = ctx.keyHint ? `the API key ending in …${ctx.keyHint}` : 'the API key';
    return fail(
      `Authentication failed: Cairn rejected ${key} (${withoutFinalPeriod(err.message)}). ` +
        'Ask the user to check CAIRN_API_KEY (or SERVICE_API_KEY) in the MCP server configuration.',
      { ...base, retry_hint: 'do_not_retry' },
    );
  }
  if (err.status === 429) {
    const wait = err.retryAfter ?? 1;
    return fail(`Rate limited (${withoutFinalPeriod(err.message)}). Wait ${wait} s, then repeat the call.`, {
      ...base,
      retry_hint: 'retry_after',
      retry_after_seconds: wait,
    });
  }
  const upgrade = err.upgradeUrl ? ` Upgrade: ${err.upgradeUrl}` : '';
  const hint: RetryHint =
    err.status === 403 || err.status === 410 || isHtmlPasswordRefusal(err) ? 'do_not_retry' : 'fix_arguments';
  const message = sentence(toolMessage(err, ctx.args ?? {}) ?? err.message);
  return fail(`${err.code}: ${message}${upgrade}`, {
    ...base,
    retry_hint: hint,
    ...(err.upgradeUrl ? { upgrade_url: err.upgradeUrl } : {}),
  });
}

/**
 * A message as one sentence ending with a period, whether it came with one (the hosted server's
 * core errors) or without (the API's envelope drops its final period).
 */
function sentence(message: string): string {
  const trimmed = message.trimEnd();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * A password page refused for an HTML artifact: no argument fixes that for this artifact (the
 * message names what does), so it is not an invitation to try again.
 */
function isHtmlPasswordRefusal(err: { code: string; message: string }): boolean {
  return err.code === 'invalid_request' && err.message.startsWith('Password access is not available for HTML');
}

/**
 * A suspended account is `401 unauthorized` with a message naming the suspension (the hosted
 * service's convention, which its clients match on); the key itself is not at fault.
 */
function isSuspension(err: { code: string; message: string }): boolean {
  return err.code === 'unauthorized' && /suspended/i.test(err.message);
}

/**
 * The API's messages point at its own routes; through the tools, a missing thing is named with
 * the id the agent sent and the tool that finds real ones.
 */
function toolMessage(err: { code: string; message: string }, args: Record<string, unknown>): string | null {
  const id = typeof args.artifact_id === 'string' ? args.artifact_id : null;
  switch (err.code) {
    case 'artifact_not_found':
      if (id !== null && /^Page /.test(err.message)) {
        return (
          `no published page for ${id} in this account (never published, or its ` +
          "artifact is gone). get_artifact shows an artifact's page.public_url; publish_artifact publishes one."
        );
      }
      return id === null
        ? null
        : `no artifact ${id} in this account (never stored here, or removed for good). Find ids with ` +
            'list_artifacts, e.g. {"filename": "report.md"} or {"session_id": "..."}.';
    case 'artifact_already_deleted':
      return id === null
        ? null
        : `artifact ${id} was deleted; it cannot be read or shared any more. Store the file again with ` +
            'store_artifact if it is still needed.';
    case 'artifact_expired':
      return id === null
        ? null
        : `artifact ${id} has expired (its ttl passed). Store the file again with store_artifact, with a ` +
            'longer ttl, if it is still needed.';
    case 'session_sealed':
      return typeof args.session_id === 'string'
        ? `session ${JSON.stringify(args.session_id)} is sealed: it takes no more artifacts. Store with another ` +
            'session_id (list_sessions shows which are sealed).'
        : null;
    case 'session_not_found':
      return typeof args.session_id === 'string'
        ? `no session ${JSON.stringify(args.session_id)} in this account (a session exists once an artifact is ` +
            'stored with its session_id). Find sessions with list_sessions.'
        : null;
    default:
      return null;
  }
}
