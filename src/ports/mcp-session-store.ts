/**
 * Sessions of the hosted MCP endpoint (Streamable HTTP) and the resources each has subscribed
 * to, kept in the metadata database so that every instance of a scale-out set sees them: a
 * client's `resources/subscribe` may land on one instance and its GET stream on another.
 */
export interface McpSessionRow {
  /** What the client sends as `Mcp-Session-Id`. Not a credential: every request also carries its bearer. */
  id: string;
  tenantId: string;
  /** The credential the session was opened with: the API key's id, or the OAuth grant's. */
  principalId: string;
  createdAt: number;
  /** The last request or stream heartbeat of the session: it ends when idle too long. */
  lastUsedAt: number;
}

export interface McpSessionStore {
  /**
   * Records a new session. When its tenant holds `max` sessions already, the least recently used
   * ones are ended (with their subscriptions) to make room, in the same transaction.
   */
  createMcpSession(row: McpSessionRow, max: number): Promise<void>;
  /** The session with this id, of any tenant (the caller checks whose), or null. */
  getMcpSession(id: string): Promise<McpSessionRow | null>;
  /** Marks the session used at `at` (no-op for an unknown id). */
  touchMcpSession(id: string, at: number): Promise<void>;
  /** Ends the tenant's session and drops its subscriptions; false when it had none by that id. */
  deleteMcpSession(tenantId: string, id: string): Promise<boolean>;
  /**
   * Adds `uri` to the session's subscriptions (already there: nothing changes). 'too_many' when
   * the session holds `max` others; 'gone' when the session no longer exists.
   */
  subscribeMcp(sessionId: string, uri: string, max: number): Promise<'ok' | 'too_many' | 'gone'>;
  unsubscribeMcp(sessionId: string, uri: string): Promise<void>;
  /** The session's subscribed URIs, or null when the session no longer exists. */
  mcpSubscriptions(sessionId: string): Promise<string[] | null>;
  /** Ends sessions last used before `idleBefore`, at most `batch`; how many (the sweeper's step). */
  purgeMcpSessions(idleBefore: number, batch: number): Promise<number>;
}
