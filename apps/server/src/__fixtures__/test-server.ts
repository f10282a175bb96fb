import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Policy, type Sim, startSim } from '@delegate/api-sim';
import type { ServerConfigInput } from '../config/server-config.js';
import type { RunQueue } from '../queue/run-queue.js';
import type { RunStore } from '../store/run-store.js';
import type { ApiEvent, ApiRun } from './api-types.js';
import { type DelegateServer, startServer } from '../start-server.js';

export const TEST_TOKEN = 'test-token-0123456789abcdef';
export const TEST_API_KEY = 'sk-test-api-key-0123456789';

export type TestServer = {
  server: DelegateServer;
  sim: Sim;
  root: string;
  workspace: string;
  dataDir: string;
  logs: string[];
  /** fetch against the server with the token. */
  api: (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
  close: () => Promise<void>;
};

/** A server on a temporary data dir and workspace, talking to an api-sim with `policy`. */
export async function startTestServer(options: {
  policy: Policy;
  config?: ServerConfigInput;
  pacing?: { timeToFirstTokenMs?: number; msPerToken?: number };
  /** The store to use, given the data directory; default the server's SQLite store. */
  store?: (dataDir: string) => RunStore;
  /** The queue to use; default the server's in-process queue. */
  queue?: RunQueue;
}): Promise<TestServer> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-server-test-')));
  const workspace = join(root, 'workspace');
  const dataDir = join(root, 'data');
  const home = join(root, 'home');
  await mkdir(workspace, { recursive: true });
  await mkdir(home, { recursive: true });
  await mkdir(dataDir, { recursive: true });
  const sim = await startSim({
    policy: options.policy,
    ...(options.pacing ? { pacing: options.pacing } : {}),
  });
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(String(chunk));
      callback();
    },
  });
  const server = await startServer(
    {
      port: 0,
      dataDir,
      workspaceRoots: [workspace],
      apiKey: TEST_API_KEY,
      baseURL: sim.url,
      token: TEST_TOKEN,
      homeDir: home,
      logLevel: 'info',
      rateLimitPerMinute: 100_000,
      authFailuresPerMinute: 100_000,
      ...options.config,
    },
    {
      logDestination: destination as never,
      ...(options.store ? { store: options.store(dataDir) } : {}),
      ...(options.queue ? { queue: options.queue } : {}),
    },
  );
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${TEST_TOKEN}`);
    if (json !== undefined) headers.set('content-type', 'application/json');
    return fetch(`${server.url}${path}`, {
      ...rest,
      headers,
      ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? 'POST' } : {}),
    });
  };
  return {
    server,
    sim,
    root,
    workspace,
    dataDir,
    logs,
    api,
    close: async () => {
      await server.close({ timeoutMs: 2_000 });
      await sim.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls `GET /v1/runs/:id` until `check` holds (a hang guard, not a timing assertion). */
export async function waitForRun(
  test: TestServer,
  runId: string,
  check: (run: ApiRun) => boolean,
  what = 'the run',
): Promise<ApiRun> {
  // A hang guard only (the outcome never depends on how long it takes).
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline) {
    const response = await test.api(`/v1/runs/${runId}`);
    const run = (await response.json()) as ApiRun;
    if (check(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A gate a policy can wait on. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Reads an SSE response to its end (or until `stop` says so) and returns its events. */
export async function readSse(
  response: Response,
  options: { stop?: (event: { id: number; event: string; data: ApiEvent }) => boolean } = {},
): Promise<{ events: { id: number; event: string; data: ApiEvent }[]; comments: number }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const events: { id: number; event: string; data: ApiEvent }[] = [];
  let comments = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let boundary = buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      boundary = buffer.indexOf('\n\n');
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          comments++;
          continue;
        }
        const colon = line.indexOf(':');
        if (colon === -1) continue;
        fields[line.slice(0, colon)] =
          (fields[line.slice(0, colon)] ?? '') + line.slice(colon + 1).trimStart();
      }
      if (fields.id === undefined) continue;
      const event = {
        id: Number(fields.id),
        event: fields.event ?? 'message',
        data: JSON.parse(fields.data ?? 'null'),
      };
      events.push(event);
      if (options.stop?.(event)) {
        await reader.cancel();
        return { events, comments };
      }
    }
  }
  return { events, comments };
}
