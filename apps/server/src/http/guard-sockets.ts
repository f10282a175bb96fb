import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

/** Most sockets one client address may hold open at once; more are closed as they connect. */
export const MAX_SOCKETS_PER_ADDRESS = 256;

/** How long a request's body may take to arrive once its headers did, in ms. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * Options of the HTTP server that bound how long a client may take: its request's headers
 * within `headersTimeoutMs`, its body within a minute (Node then answers 408 and closes the
 * socket), checked often enough for those limits to hold. Streams that are answering (SSE)
 * are not affected: these limits are on receiving requests.
 */
export function socketTimeouts(options: { headersTimeoutMs: number }): ServerOptions {
  return {
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: Math.max(REQUEST_TIMEOUT_MS, options.headersTimeoutMs),
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(options.headersTimeoutMs / 2)),
  };
}

/**
 * Lets one client address hold at most {@link MAX_SOCKETS_PER_ADDRESS} sockets, so a flood of
 * half-open connections from one place cannot use up the process's file descriptors and lock
 * out every other client.
 */
export function capSocketsPerAddress(server: Server): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > MAX_SOCKETS_PER_ADDRESS) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
