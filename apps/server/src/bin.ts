#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { errorMessage } from '@delegate/core';
import { readCommandLine } from './config/read-command-line.js';
import { createIdleCollector } from './process/idle-collector.js';
import { startServer } from './start-server.js';

async function main(): Promise<void> {
  const input = readCommandLine(process.argv.slice(2), process.env);
  if (input === undefined) return;
  // Runs get a scrubbed environment anyway; nothing in this process needs these again.
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.DELEGATE_SERVER_TOKEN;
  // Process-wide V8 settings belong to the bin. The baseline wasm tier is enough for
  // undici's HTTP parser and the Bash grammar, and keeps their compiled code small.
  setFlagsFromString('--liftoff-only');
  const idle = createIdleCollector();
  const server = await startServer(input, { onIdle: idle.onIdle, onBusy: idle.cancel });
  if (server.token.source === 'generated') {
    // Shown once, on the terminal, not in the JSON log.
    process.stderr.write(
      `delegate-server: generated an API token, stored with mode 0600 in ${server.token.path}:\n\n  ${server.token.token}\n\nSend it as "Authorization: Bearer <token>". It is not shown again.\n`,
    );
  }
  process.stderr.write(
    server.config.role === 'worker'
      ? `delegate-server: worker taking runs from the shared queue (at most ${server.config.maxConcurrentRuns} at once)${server.url ? `; health checks on ${server.url}/healthz, /readyz and /metrics` : ''}\n`
      : `delegate-server: listening on ${server.url} (dashboard at ${server.url}/)\n`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      process.stderr.write(`delegate-server: ${signal} again, exiting at once\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`delegate-server: ${signal}, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`delegate-server: shutdown failed: ${errorMessage(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${errorMessage(error)}\n`);
  process.exit(1);
});
