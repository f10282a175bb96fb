#!/usr/bin/env node
import { processIo } from './cli-io.js';
import { printDelegateWarnings } from './delegate-warnings.js';
import { EXIT_CODES } from './exit-codes.js';
import { runCli } from './program.js';
import { applyV8Flags } from './v8-flags.js';

applyV8Flags();
printDelegateWarnings(process.stderr);

const io = processIo();
const code = await runCli(process.argv.slice(2), io);
// Exit even when a library left a handle open (a keep-alive socket, a timer); wait for
// stdout to take what was written first. Output that could not be written overrides the
// command's own outcome: its reader went away (EPIPE, also after the run ended) is exit code
// 141; any other write error (a full disk) is a failure, exit code 1.
// The decision waits one turn of the event loop: the error of an earlier write is reported
// (outputClosed aborted, outputFailure set) on the next tick, possibly after this empty
// write's callback.
process.stdout.write('', (error) =>
  setImmediate(() => {
    if (io.outputFailure?.() !== undefined) process.exit(EXIT_CODES.runFailed);
    process.exit(error || io.outputClosed?.aborted === true ? EXIT_CODES.outputClosed : code);
  }),
);
