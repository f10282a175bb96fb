import { type Server, type Socket, connect, createServer } from 'node:net';

/** A TCP proxy a test controls, to cut a server off from PostgreSQL or Redis and back. */
export type TcpProxy = {
  /** `url` with its host and port replaced by the proxy's. */
  url: string;
  /** Drops every connection and refuses new ones (they are reset at once) until `restore`. */
  cut: () => void;
  /** Lets connections through again. */
  restore: () => void;
  close: () => Promise<void>;
};

/** Starts a proxy on a free loopback port in front of `url`'s host and port. */
export async function startTcpProxy(url: string, defaultPort: number): Promise<TcpProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({
      host: target.hostname,
      port: Number(target.port || defaultPort),
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return {
    url: proxied.toString(),
    cut: () => {
      open = false;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    restore: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
