import { printable } from './terminal/format.js';

/**
 * Prints the process warnings Delegate's libraries emit (codes `DELEGATE_*`: a torn
 * transcript line, a bad transcript record) as `delegate: warning: …` lines on stderr, in
 * place of Node's own format with its `--trace-warnings` hint; other warnings keep Node's
 * handling. Only the process owner (the bin) calls this, never a library.
 */
export function printDelegateWarnings(stderr: NodeJS.WritableStream): void {
  const others = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    if (typeof warning.code === 'string' && warning.code.startsWith('DELEGATE_')) {
      // A warning can quote a transcript line: its control characters show as `?`.
      stderr.write(`delegate: warning: ${printable(warning.message)}\n`);
      return;
    }
    for (const listener of others) listener(warning);
  });
}
