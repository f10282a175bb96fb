#!/usr/bin/env node
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DelegateError, errorMessage } from '@delegate/core';
import { BIN_USAGE, parseBinArguments, type BinArguments } from './parse-bin-args.js';
import type { Policy } from './policy.js';
import { startSim } from './start-sim.js';

/** Exit status of a usage error: a bad flag, or a policy file that is missing or unusable. */
const USAGE_ERROR_EXIT = 2;
const POLICY_HINT =
  'Pass --policy with the path of an ES module (.mjs or .js) whose default export is a policy function.';

function usageError(message: string): DelegateError {
  return new DelegateError('INVALID_ARGUMENT', `delegate-sim: ${message}`);
}

function systemCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

async function assertPolicyFile(path: string, absolutePath: string): Promise<void> {
  const stats = await stat(absolutePath).catch((error: unknown) => {
    if (systemCode(error) === 'ENOENT' || systemCode(error) === 'ENOTDIR') {
      throw usageError(
        `policy file not found: ${path} (looked for ${absolutePath}). ${POLICY_HINT}`,
      );
    }
    throw usageError(`cannot read the policy file ${path}: ${errorMessage(error)}. ${POLICY_HINT}`);
  });
  if (!stats.isFile()) {
    throw usageError(`the policy ${path} is not a file. ${POLICY_HINT}`);
  }
}

function loadFailure(path: string, error: unknown): DelegateError {
  if (systemCode(error) === 'ERR_UNKNOWN_FILE_EXTENSION') {
    return usageError(
      `cannot load the policy ${path}: Node cannot import this file type. ${POLICY_HINT}`,
    );
  }
  const name = error instanceof Error ? `${error.name}: ` : '';
  const message = (errorMessage(error).split('\n')[0] ?? '').trim();
  // Node keeps the line of a syntax error out of the error object; `node --check` prints it.
  const where = error instanceof SyntaxError ? ` (\`node --check ${path}\` shows the line)` : '';
  return usageError(
    `the policy module ${path} failed to load: ${name}${message}${where}. Fix the module, or pass another --policy.`,
  );
}

async function loadPolicy(path: string): Promise<Policy> {
  const absolutePath = resolve(path);
  await assertPolicyFile(path, absolutePath);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(absolutePath).href)) as { default?: unknown };
  } catch (error) {
    throw loadFailure(path, error);
  }
  if (typeof module.default !== 'function') {
    throw usageError(
      `${path} must export a policy function as its default export (for example \`export default rules([...])\`).`,
    );
  }
  return module.default as Policy;
}

function parseArguments(argv: readonly string[]): BinArguments {
  try {
    return parseBinArguments(argv);
  } catch (error) {
    // The parser's message ends with the whole usage text; one line and a pointer is enough.
    const firstLine = errorMessage(error).split('\n')[0] ?? '';
    throw usageError(`${firstLine.replace(/^delegate-sim: /, '')} (see delegate-sim --help).`);
  }
}

function describeStartFailure(error: unknown, args: BinArguments): string {
  const code = systemCode(error);
  if (code === 'EADDRINUSE') {
    return `delegate-sim: port ${args.port} on ${args.host} is already in use. Pass another --port (0 picks a free one).`;
  }
  if (code === 'EACCES') {
    return `delegate-sim: not allowed to listen on ${args.host}:${args.port}. Pass a port above 1023 (or 0 for any free one).`;
  }
  if (code === 'ENOTFOUND' || code === 'EADDRNOTAVAIL') {
    return `delegate-sim: cannot listen on host ${args.host} (${code}). Pass --host 127.0.0.1 or another local address.`;
  }
  return `delegate-sim: ${errorMessage(error).split('\n')[0] ?? ''}`;
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(BIN_USAGE);
    return;
  }
  const policy = args.policyPath === undefined ? undefined : await loadPolicy(args.policyPath);
  const sim = await startSim({
    port: args.port,
    host: args.host,
    pacing: args.pacing,
    ...(args.seed === undefined ? {} : { seed: args.seed }),
    ...(policy === undefined ? {} : { policy }),
  }).catch((error: unknown) => {
    process.stderr.write(`${describeStartFailure(error, args)}\n`);
    process.exit(1);
  });
  process.stdout.write(`${sim.url}\n`);
  const stop = () => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  const usage = DelegateError.hasCode(error, 'INVALID_ARGUMENT');
  process.stderr.write(`${errorMessage(error).split('\n')[0] ?? ''}\n`);
  process.exit(usage ? USAGE_ERROR_EXIT : 1);
});
