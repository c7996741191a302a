// A TCP proxy in front of a PostgreSQL server, to make it look the way a failing or loaded server
// looks to a client: slow to take a new connection (a box under load forking a backend),
// stalled (a server killed under an open connection the client never sees close: nothing
// forwarded either way, both sockets left open), or a black hole (a host gone from the network:
// connections accepted and never answered).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Each new connection reaches the server only this long after it is accepted (0: at once). */
  connectDelayMs: number;
  /** Keeps every connection open and forwards nothing, either way. */
  stall(): void;
  /** Cuts every open connection and answers no new one. */
  blackHole(): void;
  /** Forwards again; connections open now are cut (as after a stall the client's sessions are gone). */
  open(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  let stalled = false;
  let silent = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const proxy = {
    port: 0,
    connectDelayMs: 0,
    stall() {
      stalled = true;
    },
    blackHole() {
      silent = true;
      for (const socket of sockets) socket.destroy();
    },
    open() {
      silent = false;
      stalled = false;
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((client) => {
    track(client);
    if (silent) return;
    // By hand rather than pipe(): a stall drops the bytes and keeps both sockets open.
    const early: Buffer[] = [];
    let upstream: Socket | null = null;
    client.on('data', (chunk: Buffer) => {
      if (stalled) return;
      if (upstream) upstream.write(chunk);
      else early.push(chunk);
    });
    const reach = () => {
      if (client.destroyed) return;
      const server = connect(targetPort, '127.0.0.1');
      upstream = server;
      track(server);
      for (const chunk of early.splice(0)) server.write(chunk);
      server.on('data', (chunk: Buffer) => { if (!stalled) client.write(chunk); });
      server.on('close', () => client.destroy());
      client.on('close', () => server.destroy());
    };
    // Unref: a connection still waiting when the proxy closes keeps no test process alive.
    if (proxy.connectDelayMs > 0) setTimeout(reach, proxy.connectDelayMs).unref();
    else reach();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as { port: number }).port;
  return proxy;
}
