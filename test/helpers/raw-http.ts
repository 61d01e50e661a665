import net from 'node:net';

/** HTTP over a bare TCP socket, for requests no HTTP client would send (or send that way). */

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

export interface RawConnection {
  write(data: string | Buffer): void;
  /** Everything the server has sent so far. */
  received(): string;
  /** Everything the server sent, once it has closed the connection. */
  closed: Promise<string>;
  destroy(): void;
}

/** The head of a request to `origin` announcing `length` body bytes, as a raw string. */
export function requestHead(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  length: number,
): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `${method} ${path} HTTP/1.1\r\nHost: ${new URL(origin).host}\r\n${lines.join('')}Content-Length: ${length}\r\n\r\n`;
}

/** Opens a TCP connection to the host and port of `url`. */
export async function rawConnect(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  const closed = new Promise<string>((resolve) => {
    // A reset after the answer (the server destroys the socket) still leaves what it sent.
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
  return {
    write: (data) => socket.write(data),
    received: () => Buffer.concat(chunks).toString('latin1'),
    closed,
    destroy: () => socket.destroy(),
  };
}

/** Sends `data` on a fresh connection and returns the responses the server wrote before closing it. */
export async function rawRequest(url: string, data: string | Buffer, timeoutMs = 10_000): Promise<RawResponse[]> {
  const conn = await rawConnect(url);
  const timer = setTimeout(() => conn.destroy(), timeoutMs);
  conn.write(data);
  const text = await conn.closed;
  clearTimeout(timer);
  return parseResponses(text);
}

/** Splits a byte stream into responses (Content-Length framing, which is all the tests need). */
export function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`incomplete response head: ${rest.slice(0, 200)}`);
    const { status, headers } = parseHead(rest.slice(0, end));
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = end + 4;
    out.push({ status, headers, body: rest.slice(bodyStart, bodyStart + length) });
    rest = rest.slice(bodyStart + length);
  }
  return out;
}

/** A response head (status line and headers, without the blank line); header names in lower case. */
export function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) throw new Error(`not a status line: ${statusLine}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers };
}
