import net from 'node:net';

/**
 * A TCP load balancer in front of one or more Cairn instances: each new connection goes to the
 * current target. `cutAfter(n)` arms it to kill the next connection that carries more than `n`
 * bytes from the client, as a dropped network would (both sockets destroyed mid-request).
 */
export class Balancer {
  url = '';
  cuts = 0;
  private server!: net.Server;
  private target = 0;
  private cutAt: number | null = null;
  private readonly sockets = new Set<net.Socket>();

  async start(): Promise<this> {
    this.server = net.createServer((client) => this.connect(client));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }

  /** Sends new connections to the listener on `port` (connections already open stay where they are). */
  routeTo(port: number): this {
    this.target = port;
    return this;
  }

  cutAfter(bytes: number): this {
    this.cutAt = bytes;
    return this;
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.target, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    let sent = 0;
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (this.cutAt !== null && sent > this.cutAt) {
        this.cutAt = null;
        this.cuts++;
        drop();
        return;
      }
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.on('data', (chunk: Buffer) => {
      if (!client.write(chunk)) upstream.pause();
    });
    client.on('drain', () => upstream.resume());
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/** A port free right now (the OS picks it), for a listener that must know its port before it starts. */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}
