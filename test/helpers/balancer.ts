import net from 'node:net';

/**
 * A TCP load balancer in front of one or more Cairn instances: each new connection goes to the
 * current target. `cutAfter(n)` arms it to kill the next connection that carries more than `n`
 * bytes from the client, as a dropped network would (both sockets destroyed mid-request).
 */
export class Balancer {
  url = '';
  cuts = 0;
  /** The port each connection went to, in order. */
  readonly connections: number[] = [];
  private server!: net.Server;
  private target = 0;
  private cutAt: number | null = null;
  private beforeCut: () => Promise<void> = async () => {};
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

  /**
   * Arms the cut: the first `bytes` of the next connection that carries more are forwarded, the
   * rest is held back, and once `ready` resolves (say, when the server is known to be reading
   * that request) the connection dies. Without `ready` a server that had not started reading
   * could lose the forwarded bytes with the connection, and nothing would be left to resume.
   */
  cutAfter(bytes: number, ready: () => Promise<void> = async () => {}): this {
    this.cutAt = bytes;
    this.beforeCut = ready;
    return this;
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.target, '127.0.0.1');
    this.connections.push(this.target);
    this.sockets.add(client).add(upstream);
    let sent = 0;
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    let cutting = false;
    client.on('data', (chunk: Buffer) => {
      if (cutting) return;
      const before = sent;
      sent += chunk.length;
      if (this.cutAt !== null && sent > this.cutAt) {
        cutting = true;
        upstream.write(chunk.subarray(0, Math.max(0, this.cutAt - before)));
        client.pause();
        this.cutAt = null;
        this.cuts++;
        void this.beforeCut().finally(drop);
        return;
      }
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => {
      if (!cutting) client.resume();
    });
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

  /** Kills every open connection (a network drop); new ones are forwarded as before. */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
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
