import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  /** The request's path and query. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The status the next requests get (default 200). */
  answer: number | ((r: Received) => number);
  /** Requests it picks are recorded and never answered (a receiver that hangs). */
  hold: (r: Received) => boolean;
  /** The bodies that verified with `secret` (throws at the first that does not), of the requests `which` picks. */
  verified(secret: string, which?: (r: Received) => boolean): unknown[];
  close(): Promise<void>;
}

/** A webhook receiver on loopback, port chosen by the OS: it records every POST and answers `answer`. */
export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const received: Received[] = [];
  const receiver: Receiver = {
    url: '',
    received,
    answer: 200,
    hold: () => false,
    verified(secret, which = () => true) {
      const wh = new Webhook(secret);
      return received.filter(which).map((r) => wh.verify(r.body, r.headers));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const r: Received = { url: req.url ?? '', headers: req.headers as Record<string, string>, body };
      received.push(r);
      if (receiver.hold(r)) return;
      const status = typeof receiver.answer === 'function' ? receiver.answer(r) : receiver.answer;
      res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
