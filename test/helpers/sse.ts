import http from 'node:http';

/** One message of a text/event-stream, as an EventSource would hand it over; comments too (for heartbeats). */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
  retry?: number;
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body when the answer was not a stream (an error envelope). */
  body: string;
  /** The next message (comments included) within `ms`, or throws. */
  next(ms?: number): Promise<SseMessage>;
  /** The next message that is an event (not a comment or retry) within `ms`. */
  nextEvent(ms?: number): Promise<SseMessage & { id: string; event: string; data: string }>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * A plain SSE client on node:http, parsing the stream as the WHATWG EventSource does (fields,
 * blank line ends a message, `:` a comment), without reconnecting: tests reconnect themselves
 * with Last-Event-ID to check resumption.
 */
export function openSse(url: string, key: string | null, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { accept: 'text/event-stream', ...headers };
    if (key) h.authorization = `Bearer ${key}`;
    const req = http.get(url, { headers: h }, (res) => {
      const queue: SseMessage[] = [];
      const waiters: ((m: SseMessage | null) => void)[] = [];
      let buffer = '';
      let body = '';
      let current: SseMessage = {};
      let done = false;
      let endedResolve: () => void = () => {};
      const ended = new Promise<void>((r) => {
        endedResolve = r;
      });
      const push = (m: SseMessage) => {
        const w = waiters.shift();
        if (w) w(m);
        else queue.push(m);
      };
      const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!streaming) {
          body += chunk;
          return;
        }
        buffer += chunk;
        let nl = buffer.indexOf('\n');
        while (nl !== -1) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (Object.keys(current).length > 0) push(current);
            current = {};
          } else if (line.startsWith(':')) {
            push({ comment: line.slice(1).trim() });
          } else {
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`;
            else if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
            else if (field === 'retry') current.retry = Number(value);
          }
          nl = buffer.indexOf('\n');
        }
      });
      const finish = () => {
        done = true;
        for (const w of waiters.splice(0)) w(null);
        endedResolve();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const next = (ms = 5000) =>
        new Promise<SseMessage>((res2, rej) => {
          const m = queue.shift();
          if (m) return res2(m);
          if (done) return rej(new Error('stream ended'));
          const timer = setTimeout(() => {
            const i = waiters.indexOf(waiter);
            if (i !== -1) waiters.splice(i, 1);
            rej(new Error(`no SSE message within ${ms} ms`));
          }, ms);
          const waiter = (got: SseMessage | null) => {
            clearTimeout(timer);
            if (got) res2(got);
            else rej(new Error('stream ended'));
          };
          waiters.push(waiter);
        });
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        get body() {
          return body;
        },
        next,
        async nextEvent(ms = 5000) {
          const deadline = Date.now() + ms;
          for (;;) {
            const m = await next(Math.max(1, deadline - Date.now()));
            if (m.event !== undefined && m.data !== undefined && m.id !== undefined) {
              return m as SseMessage & { id: string; event: string; data: string };
            }
          }
        },
        ended,
        close: () => req.destroy(),
      };
      if (streaming) resolve(client);
      else res.on('end', () => resolve(client));
    });
    req.on('error', reject);
  });
}
