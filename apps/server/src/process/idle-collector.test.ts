import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startServer } from '../start-server.js';
import { createIdleCollector } from './idle-collector.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createIdleCollector', () => {
  it('collects after the delay, then at each follow-up', async () => {
    let collections = 0;
    const idle = createIdleCollector({
      delayMs: 10,
      followUpMs: [10, 20],
      collect: () => collections++,
    });
    idle.onIdle();
    expect(collections).toBe(0);
    await wait(80);
    expect(collections).toBe(3);
  });

  it('restarts the schedule when the server goes idle again, and cancel stops it', async () => {
    let collections = 0;
    const idle = createIdleCollector({ delayMs: 30, followUpMs: [], collect: () => collections++ });
    idle.onIdle();
    await wait(10);
    idle.onIdle();
    await wait(70);
    expect(collections).toBe(1);
    idle.onIdle();
    idle.cancel();
    await wait(60);
    expect(collections).toBe(1);
  });

  it('uses V8 full collections by default', () => {
    // The default exposes V8's gc() for the process; getting it and scheduling must work.
    expect(() => {
      const idle = createIdleCollector({ delayMs: 1 });
      idle.onIdle();
      idle.cancel();
    }).not.toThrow();
  });
});

describe('startServer with onIdle', () => {
  it('calls onBusy when a run starts on an idle server and onIdle when the last one ends its turn', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delegate-idle-'));
    const workspace = join(root, 'workspace');
    await mkdir(workspace);
    let idleCalls = 0;
    let busyCalls = 0;
    const server = await startServer(
      {
        port: 0,
        dataDir: join(root, 'data'),
        workspaceRoots: [workspace],
        homeDir: root,
        token: 'idle-test-token-0123456789',
        sim: 'echo',
        logLevel: 'error',
      },
      {
        onIdle: () => idleCalls++,
        onBusy: () => busyCalls++,
        logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }),
      },
    );
    try {
      const headers = {
        authorization: 'Bearer idle-test-token-0123456789',
        'content-type': 'application/json',
      };
      const created = await fetch(`${server.url}/v1/runs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ prompt: 'hello', workspace }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      let status = 'queued';
      for (let i = 0; i < 200 && !['completed', 'failed'].includes(status); i++) {
        await wait(25);
        const run = await fetch(`${server.url}/v1/runs/${id}`, { headers });
        status = ((await run.json()) as { status: string }).status;
      }
      expect(status).toBe('completed');
      await wait(25);
      expect(busyCalls).toBe(1);
      expect(idleCalls).toBe(1);
    } finally {
      await server.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
