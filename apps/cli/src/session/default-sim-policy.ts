import type { Policy } from '@delegate/api-sim';

/**
 * The simulator's answer when no policy module is given (`--sim`, `delegate sim`): the
 * prompt itself. The last text block is what the person typed; the agent list reminder
 * Delegate puts before it is not.
 */
export async function defaultSimPolicy(): Promise<Policy> {
  const { echo } = await import('@delegate/api-sim');
  return (request) => request.lastTextBlock ?? echo(request);
}
