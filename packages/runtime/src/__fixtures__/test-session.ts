import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Policy, type Sim, startSim, type SimOptions } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import type { AgentDefinition } from '@delegate/core';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';
import type { DelegateSessionOptions } from '../session/session-options.js';

/** A simulator, a temporary working directory and a session wired to both. */
export type TestSession = {
  sim: Sim;
  session: DelegateSession;
  cwd: string;
  transcriptDir: string;
  cleanup: () => Promise<void>;
};

/** Starts the simulator and a session on a fresh temporary directory. */
export async function createTestSession(options: {
  policy: Policy;
  sim?: Omit<SimOptions, 'policy'>;
  session?: Partial<DelegateSessionOptions>;
  agents?: AgentDefinition[];
  cwd?: string;
}): Promise<TestSession> {
  const sim = await startSim({ ...options.sim, policy: options.policy });
  const root = await mkdtemp(join(tmpdir(), 'delegate-runtime-'));
  const cwd = options.cwd ?? join(root, 'work');
  await mkdir(cwd, { recursive: true });
  const transcriptDir = join(root, 'transcripts');
  const agents = [...getBuiltInAgents(), ...(options.agents ?? [])];
  const session = await DelegateSession.create({
    cwd,
    client: createApiClient({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 3 }),
    agentDefinitions: { activeAgents: agents, allAgents: agents },
    transcriptDir,
    homeDir: join(root, 'home'),
    backgroundHintMs: 60_000,
    ...options.session,
  });
  return {
    sim,
    session,
    cwd,
    transcriptDir,
    cleanup: async () => {
      session.abort();
      await session.flush();
      await sim.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
