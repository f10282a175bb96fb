import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
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
  /** The temporary folder holding `cwd`, `home` and `transcripts`. */
  root: string;
  /** The session's home directory (user agents, user memory). */
  homeDir: string;
  transcriptDir: string;
  /** Errors thrown by event listeners (an assertion inside a listener lands here too). */
  listenerErrors: unknown[];
  /** Stops everything and removes the folder; rejects when a listener threw. */
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
  const root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-runtime-')));
  const cwd = options.cwd ?? join(root, 'work');
  await mkdir(cwd, { recursive: true });
  const transcriptDir = join(root, 'transcripts');
  const homeDir = join(root, 'home');
  const agents = [...getBuiltInAgents(), ...(options.agents ?? [])];
  const listenerErrors: unknown[] = [];
  const session = await DelegateSession.create({
    cwd,
    client: createApiClient({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 3 }),
    agentDefinitions: { activeAgents: agents, allAgents: agents },
    transcriptDir,
    homeDir,
    backgroundHintMs: 60_000,
    // Worktrees stay inside the test's folder, never in the shared temp folder.
    worktreeRoot: join(root, 'worktrees'),
    // A throwing listener (a failed assertion inside one) must fail the test: it is rethrown
    // to the emitter and reported again by cleanup.
    onEventListenerError: (error) => {
      listenerErrors.push(error);
      throw error;
    },
    ...options.session,
  });
  return {
    sim,
    session,
    cwd,
    root,
    homeDir,
    transcriptDir,
    listenerErrors,
    cleanup: async () => {
      await session.close();
      await sim.close();
      await rm(root, { recursive: true, force: true });
      if (listenerErrors.length > 0) throw listenerErrors[0];
    },
  };
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
