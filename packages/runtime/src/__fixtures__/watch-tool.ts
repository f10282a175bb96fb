import type { Tool } from '@delegate/core';
import { z } from 'zod';

/**
 * A tool that reports progress at once, then waits until its call is aborted (`onAbort` gets
 * the reason): its progress lets a loop's consumer stop in the middle of the call.
 */
export function watchTool(onAbort: (reason: unknown) => void = () => undefined): Tool {
  return {
    name: 'Watch',
    inputSchema: z.object({}),
    description: () => 'Watches until stopped.',
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async call(_input, context, extras) {
      extras?.onProgress?.({ watching: true });
      const signal = context.abortController.signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      onAbort(signal.reason);
      return { content: 'stopped watching' };
    },
  };
}
