import { type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../__fixtures__/test-server.js';
import { MAX_SOCKETS_PER_ADDRESS } from './guard-sockets.js';

let test: TestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await test?.close();
  test = undefined;
});

/** A socket that sends the start of a request and never the rest; resolves once it is open. */
function halfOpen(url: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      resolve({ socket, closed });
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((done) => socket.on('close', () => done(answer)));
    sockets.push(socket);
  });
}

describe('slow and idle clients', () => {
  it('are answered 408 and closed when their headers do not arrive in time', async () => {
    test = await startTestServer({ policy: () => 'ok', config: { headersTimeoutMs: 300 } });
    const { closed } = await halfOpen(test.server.url);
    expect(await closed).toMatch(/^HTTP\/1\.1 408 /);
    // The server still answers others.
    expect((await fetch(`${test.server.url}/healthz`)).status).toBe(200);
  });

  it(`cannot hold more than ${MAX_SOCKETS_PER_ADDRESS} sockets from one address`, async () => {
    test = await startTestServer({ policy: () => 'ok' });
    const opened = await Promise.all(
      Array.from({ length: MAX_SOCKETS_PER_ADDRESS + 8 }, () => halfOpen(test!.server.url)),
    );
    // The ones past the limit are closed at once, unanswered; the others stay open.
    const closedAtOnce = await Promise.all(
      opened.map(({ closed }) =>
        Promise.race([closed.then(() => true), new Promise((r) => setTimeout(r, 1_000, false))]),
      ),
    );
    expect(closedAtOnce.filter(Boolean)).toHaveLength(8);
    for (const { socket } of opened) socket.destroy();
  });
});
