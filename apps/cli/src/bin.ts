#!/usr/bin/env node
import { processIo } from './cli-io.js';
import { printDelegateWarnings } from './delegate-warnings.js';
import { runCli } from './program.js';
import { applyV8Flags } from './v8-flags.js';

applyV8Flags();
printDelegateWarnings(process.stderr);

const code = await runCli(process.argv.slice(2), processIo());
// Exit even when a library left a handle open (a keep-alive socket, a timer); wait for
// stdout to take what was written first.
process.stdout.write('', () => process.exit(code));
