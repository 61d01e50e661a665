import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { EventFilter } from '../../core/events.js';
import type { Core } from '../../core/index.js';
import type { Caller } from '../../core/tenants.js';
import type { EventRow } from '../../ports/event-store.js';
import { eventId } from '../../shared/event-types.js';

/** Events read per query while catching up; a stream further behind reads again at once. */
const PAGE = 100;

export interface StreamOptions {
  caller: Caller;
  /**
   * Whether the stream may go on, asked at every heartbeat: the credential it was opened with
   * still authenticates (a revoked key's stream ends), and for an MCP session, the session lives.
   */
  stillAllowed(): Promise<boolean>;
  filter: EventFilter;
  heartbeatMs: number;
  /**
   * What to write for a page of events, or null to end the stream. By default each event as
   * itself; the hosted MCP endpoint's stream writes the notifications of its subscriptions.
   */
  frames?(rows: readonly EventRow[]): Promise<string[] | null>;
}

/**
 * One open `GET /v1/events/stream`: Server-Sent Events, each `id: evt_…`, `event: <type>`,
 * `data: <the event as JSON>`. It sends what the filter matches after its start, then follows
 * the tenant's feed through the EventHub (any instance's events), a heartbeat comment between.
 * Writes wait for the socket to drain, so a slow client holds one page of events, not the feed.
 */
export class EventStream {
  private pos: number;
  /** The feed head known before the last read began: everything up to it has been read. */
  private head: number;
  private pumping = false;
  private again = false;
  private ended = false;
  private stopFollowing: () => void = () => {};
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly core: Core,
    private readonly res: ServerResponse,
    private readonly opts: StreamOptions,
    head: number,
  ) {
    this.pos = opts.filter.after;
    this.head = Math.max(head, this.pos);
  }

  /** Takes one of the tenant's streams: throws 429 (before anything is written) when it holds them all. */
  follow(): void {
    this.stopFollowing = this.core.eventHub.follow(this.opts.caller.tenant.id, {
      moved: (head) => {
        this.head = Math.max(this.head, head);
        void this.pump();
      },
      closed: () => this.end(),
    });
  }

  /**
   * Takes the response over from Fastify and sends the stream's headers, with what admission set
   * (rate-limit headers, the request id) and `extra`, then starts.
   */
  startOn(reply: FastifyReply, extra: Record<string, string> = {}): void {
    reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
    this.res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
      ...extra,
    });
    this.start();
  }

  /** Once the headers are out: the first events, then heartbeats and whatever the hub reports. */
  private start(): void {
    this.res.on('close', () => this.end());
    this.heartbeat = setInterval(() => void this.beat(), this.opts.heartbeatMs);
    this.heartbeat.unref();
    // The client's reconnect delay, should the connection drop, and where this stream starts: an
    // id-only message sets an EventSource's last event id without an event, so a client that
    // reconnects before any event came resumes from here rather than from a later "now".
    this.res.write(`retry: 2000\nid: ${eventId(this.pos)}\n\n`);
    void this.pump();
  }

  private async beat(): Promise<void> {
    let allowed: boolean;
    try {
      allowed = await this.opts.stillAllowed();
    } catch {
      allowed = false;
    }
    if (!allowed) this.end();
    else if (!this.ended) this.res.write(': heartbeat\n\n');
  }

  /** Sends what is new; one at a time, and once more if the head moved meanwhile. */
  private async pump(): Promise<void> {
    if (this.ended) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        const upTo = this.head;
        let rows: EventRow[];
        do {
          rows = await this.core.events.read(
            this.opts.caller.tenant.id,
            { ...this.opts.filter, after: this.pos },
            PAGE,
          );
          const chunks = rows.length === 0 ? [] : await this.frames(rows);
          if (chunks === null) return this.end();
          for (const chunk of chunks) {
            if (this.ended) return;
            await this.write(chunk);
          }
          const last = rows.at(-1);
          if (last) this.pos = last.seq;
        } while (rows.length === PAGE);
        // Nothing after pos matched up to the head read before: skip past the others for good.
        this.pos = Math.max(this.pos, upTo);
      } while (this.again && !this.ended);
    } catch {
      // The store is down: end the stream; the client reconnects with Last-Event-ID.
      this.end();
    } finally {
      this.pumping = false;
    }
  }

  /** What to write for a page: by default each event as itself (`id`, `event: <type>`, `data: <the Event>`). */
  private async frames(rows: readonly EventRow[]): Promise<string[] | null> {
    if (this.opts.frames) return this.opts.frames(rows);
    return rows.map(
      (row) => `id: ${eventId(row.seq)}\nevent: ${row.type}\ndata: ${JSON.stringify(this.core.events.render(row))}\n\n`,
    );
  }

  /** Waits for the socket to drain (or close) when its buffer is full. */
  private async write(chunk: string): Promise<void> {
    if (this.res.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopFollowing();
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (!this.res.writableEnded) this.res.end();
  }
}
