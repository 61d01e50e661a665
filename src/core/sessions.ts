import type { SealResult, SessionList, SessionRecord } from '../wire/sessions.js';
import type { CoreDeps } from './context.js';
import { encodeCursor } from './cursor.js';
import { CairnError } from './errors.js';
import { settleExpiry } from './lifecycle.js';
import { parseSessionQuery, type RawQuery } from './list-query.js';
import { sessionRecord } from './records.js';
import type { Caller } from './tenants.js';
import { toIso } from './time.js';
import { checkLabel } from './validation.js';

/** The ports and settings this service uses, of CoreDeps. */
export type SessionServiceDeps = Pick<CoreDeps, 'artifactStore' | 'clock'>;

export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  async list(caller: Caller, raw: RawQuery): Promise<SessionList> {
    const { query, limit } = parseSessionQuery(raw);
    await settleExpiry(this.deps, caller.tenant.id);
    const rows = await this.deps.artifactStore.listSessions(caller.tenant.id, query);
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    const hasMore = rows.length > limit && last !== undefined;
    return {
      sessions: shown.map(sessionRecord),
      next_cursor: hasMore ? encodeCursor([last.lastArtifactAt, last.sessionId]) : null,
      has_more: hasMore,
    };
  }

  async get(caller: Caller, sessionId: string): Promise<SessionRecord> {
    const id = this.checkId(sessionId);
    // As the list: artifacts past their TTL no longer count.
    await settleExpiry(this.deps, caller.tenant.id);
    const row = await this.deps.artifactStore.getSession(caller.tenant.id, id);
    if (!row) throw notFound(sessionId);
    return sessionRecord(row);
  }

  /** Irreversible; sealing again answers with the original `sealed_at`. */
  async seal(caller: Caller, sessionId: string): Promise<SealResult> {
    const id = this.checkId(sessionId);
    await settleExpiry(this.deps, caller.tenant.id);
    const row = await this.deps.artifactStore.sealSession(caller.tenant.id, id, this.deps.clock.now());
    if (!row || row.sealedAt === null) throw notFound(sessionId);
    return {
      session_id: row.sessionId,
      status: 'sealed' as const,
      sealed_at: toIso(row.sealedAt),
      artifact_count: row.artifactCount,
    };
  }

  private checkId(sessionId: string): string {
    try {
      return checkLabel(sessionId, 'session_id');
    } catch {
      throw notFound(sessionId);
    }
  }
}

/** Sessions exist once an artifact names them; the next step lists the ones that do. */
const notFound = (id: string) =>
  new CairnError(
    'session_not_found',
    `Session '${id.slice(0, 128)}' not found in this account: a session exists once an artifact is stored with its ` +
      'session_id. List sessions: GET /v1/sessions.',
  );
