#!/usr/bin/env node
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DelegateError, errorMessage } from '@delegate/core';
import { BIN_USAGE, parseBinArguments } from './parse-bin-args.js';
import type { Policy } from './policy.js';
import { startSim } from './start-sim.js';

async function loadPolicy(path: string): Promise<Policy> {
  const module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  if (typeof module.default !== 'function') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `delegate-sim: ${path} must export a policy function as its default export (for example \`export default rules([...])\`).`,
    );
  }
  return module.default as Policy;
}

async function main(): Promise<void> {
  const args = parseBinArguments(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(BIN_USAGE);
    return;
  }
  const sim = await startSim({
    port: args.port,
    host: args.host,
    pacing: args.pacing,
    ...(args.seed === undefined ? {} : { seed: args.seed }),
    ...(args.policyPath === undefined ? {} : { policy: await loadPolicy(args.policyPath) }),
  });
  process.stdout.write(`${sim.url}\n`);
  const stop = () => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${errorMessage(error)}\n`);
  process.exit(1);
});
