import { setFlagsFromString } from 'node:v8';

/**
 * Sets the process-wide V8 flags the `delegate` process runs with.
 *
 * Node's fetch (undici) compiles its HTTP parser from WebAssembly on the first request, and
 * V8's optimizing wasm tier roughly doubles a short run's peak memory (about 30 MB for one
 * `delegate run`). The baseline compiler is plenty for parsing HTTP responses and for the
 * Bash grammar, and it compiles faster. Call before the first request; only the process
 * owner (the bin) does this, never a library.
 */
export function applyV8Flags(): void {
  setFlagsFromString('--liftoff-only');
}
