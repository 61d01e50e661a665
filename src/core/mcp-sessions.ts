import { randomBytes } from 'node:crypto';
import type { McpSessionRow } from '../ports/mcp-session-store.js';
import type { CoreDeps } from './context.js';
import { CairnError, invalid } from './errors.js';
import type { Caller } from './tenants.js';

/** A hosted MCP session unused for longer than this ends (refused at once; the sweeper drops it). */
export const MCP_SESSION_IDLE_MS = 24 * 3_600_000;
/** Sessions one tenant holds: opening one more ends its least recently used. */
export const MAX_MCP_SESSIONS_PER_TENANT = 100;
/** Resources one session may subscribe to. */
export const MAX_MCP_SUBSCRIPTIONS = 100;
/** A session's last use is written at most this often (not on every request). */
const TOUCH_MS = 60_000;

/** The resources a client can subscribe to: those the server lists or templates (see src/mcp/resources.ts). */
const SUBSCRIBABLE = /^cairn:\/\/(session\/[^/]+|artifact\/[^/]+(\/bytes)?)$/;

export type McpSessionDeps = Pick<CoreDeps, 'mcpSessionStore' | 'clock'>;

/** What a session is bound to: its tenant and the credential it was opened with (an API key or an OAuth grant). */
export interface McpPrincipal {
  caller: Caller;
  principalId: string;
}

const unknownSession = () =>
  new CairnError(
    'not_found',
    'MCP session not found (it ended, expired, or belongs to another connection): send initialize again without Mcp-Session-Id.',
  );

/**
 * Sessions of the hosted MCP endpoint. A session is opened by `initialize` and bound to the
 * caller's tenant and credential: any other tenant's or credential's use of its id is refused as
 * unknown (404, what the MCP transport specifies for a session the server does not know). The
 * state lives in the metadata database, so any instance of a scale-out set serves any session.
 */
export class McpSessionService {
  constructor(private readonly deps: McpSessionDeps) {}

  /** A new session for the caller: its id, for the `Mcp-Session-Id` header. */
  async open(p: McpPrincipal): Promise<string> {
    const now = this.deps.clock.now();
    const id = `mcps_${randomBytes(24).toString('base64url')}`;
    await this.deps.mcpSessionStore.createMcpSession(
      { id, tenantId: p.caller.tenant.id, principalId: p.principalId, createdAt: now, lastUsedAt: now },
      MAX_MCP_SESSIONS_PER_TENANT,
    );
    return id;
  }

  /** The caller's session `id`, marked used; 404 `not_found` when unknown, idle too long or not the caller's. */
  async resolve(p: McpPrincipal, id: string): Promise<McpSessionRow> {
    const now = this.deps.clock.now();
    const row = await this.deps.mcpSessionStore.getMcpSession(id);
    if (
      !row ||
      row.tenantId !== p.caller.tenant.id ||
      row.principalId !== p.principalId ||
      now - row.lastUsedAt > MCP_SESSION_IDLE_MS
    ) {
      throw unknownSession();
    }
    if (now - row.lastUsedAt >= TOUCH_MS) await this.deps.mcpSessionStore.touchMcpSession(id, now);
    return row;
  }

  /** DELETE /mcp: ends the caller's session (404 when it is not one). */
  async end(p: McpPrincipal, id: string): Promise<void> {
    await this.resolve(p, id);
    await this.deps.mcpSessionStore.deleteMcpSession(p.caller.tenant.id, id);
  }

  async subscribe(session: McpSessionRow, uri: string): Promise<void> {
    if (!SUBSCRIBABLE.test(uri)) {
      throw invalid(`${uri} is not a Cairn resource: subscribe to cairn://session/<id> or cairn://artifact/<id>.`);
    }
    const done = await this.deps.mcpSessionStore.subscribeMcp(session.id, uri, MAX_MCP_SUBSCRIPTIONS);
    if (done === 'gone') throw unknownSession();
    if (done === 'too_many') {
      throw invalid(`This session has ${MAX_MCP_SUBSCRIPTIONS} subscriptions already: unsubscribe from one first.`);
    }
  }

  async unsubscribe(session: McpSessionRow, uri: string): Promise<void> {
    await this.deps.mcpSessionStore.unsubscribeMcp(session.id, uri);
  }

  /**
   * The session's subscriptions now, or null when it has ended (deleted, swept, or idle past its
   * lifetime): what a stream checks before each batch of notifications. `touch` marks it used
   * (a stream's heartbeat: a session with a stream open never idles out).
   */
  async subscriptions(id: string, touch = false): Promise<Set<string> | null> {
    const now = this.deps.clock.now();
    const row = await this.deps.mcpSessionStore.getMcpSession(id);
    if (!row || now - row.lastUsedAt > MCP_SESSION_IDLE_MS) return null;
    if (touch && now - row.lastUsedAt >= TOUCH_MS) await this.deps.mcpSessionStore.touchMcpSession(id, now);
    const uris = await this.deps.mcpSessionStore.mcpSubscriptions(id);
    return uris ? new Set(uris) : null;
  }
}
