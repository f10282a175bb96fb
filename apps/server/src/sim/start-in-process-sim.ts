import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Policy, type Sim, echo, startSim } from '@delegate/api-sim';
import { DelegateError, errorMessage } from '@delegate/core';
import { demoPolicy } from './demo-policy.js';

async function loadPolicy(name: string): Promise<Policy> {
  if (name === 'echo') return echo;
  if (name === 'demo') return demoPolicy();
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(name)).href)) as { default?: unknown };
  } catch (error) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `--sim: cannot load the policy module ${name} (${errorMessage(error)}). Give "echo", "demo" or a path to a module whose default export is a policy.`,
      { cause: error },
    );
  }
  if (typeof module.default !== 'function') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `--sim: ${name} must export a policy function as its default export (for example \`export default rules([...])\`).`,
    );
  }
  return module.default as Policy;
}

/** Starts `@delegate/api-sim` on loopback with a named policy or one from a module. */
export async function startInProcessSim(options: {
  policy: string;
  pacing?: { timeToFirstTokenMs: number; msPerToken: number };
}): Promise<Sim> {
  return startSim({
    policy: await loadPolicy(options.policy),
    host: '127.0.0.1',
    ...(options.pacing ? { pacing: options.pacing } : {}),
  });
}
