import picocolors from 'picocolors';

/** The color functions the CLI uses; each is the identity when colors are off. */
export type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * Colors for one output stream: on for a terminal, off when `NO_COLOR` is set (to a
 * non-empty value), when `TERM=dumb`, or when the stream is not a terminal. `FORCE_COLOR`
 * decides before all of these, as Node.js reads it: `1`, `2`, `3`, `true` or empty turn
 * colors on, any other value (`0`, `false`) turns them off.
 */
export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Colors {
  return picocolors.createColors(colorsEnabled(stream, env));
}

/** The `FORCE_COLOR` values that turn colors on (Node.js's `tty` rules); any other turns them off. */
const FORCE_COLOR_ON = new Set(['', '1', '2', '3', 'true']);

/** Whether colors are on for `stream` under `env` (see `colorsFor`). */
export function colorsEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  const force = env['FORCE_COLOR'];
  if (force !== undefined) return FORCE_COLOR_ON.has(force);
  // no-color.org: present and not empty.
  if (env['NO_COLOR']) return false;
  if (env['TERM'] === 'dumb') return false;
  return stream.isTTY === true;
}
