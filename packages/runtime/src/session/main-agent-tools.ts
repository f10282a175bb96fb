import type { Tool } from '@delegate/core';
import { resolveAgentTools } from '@delegate/tool-filter';

/** The `tools` and `disallowedTools` of the definition the main thread runs as. */
export type MainAgentToolLists = {
  /** Tools the main agent may use (absent or `['*']`: all). */
  tools?: string[] | undefined;
  /** Tools it may not use, by name or as a whole MCP server (`mcp__github`, `mcp__github__*`). */
  disallowedTools?: string[] | undefined;
};

/**
 * The main agent's tool list: the base tools and the MCP tools, filtered by its definition's
 * lists as `resolveAgentTools` filters the main thread's pool (no sub-agent gates), then the
 * session's own tools (Agent and the task tools), which the lists do not remove. Run again
 * whenever the MCP tools change, so a server that connects later is filtered too.
 */
export function mainAgentToolList(options: {
  baseTools: readonly Tool[];
  mcpTools: readonly Tool[];
  sessionTools: readonly Tool[];
  lists: MainAgentToolLists | undefined;
}): Tool[] {
  const pool = [...options.baseTools, ...options.mcpTools];
  const lists = options.lists;
  const kept =
    lists === undefined
      ? pool
      : resolveAgentTools(
          {
            // Read only by the sub-agent gates, which the main thread skips.
            source: 'flagSettings',
            ...(lists.tools ? { tools: lists.tools } : {}),
            ...(lists.disallowedTools ? { disallowedTools: lists.disallowedTools } : {}),
          },
          pool,
          { isMainThread: true },
        ).resolvedTools;
  return [...kept, ...options.sessionTools];
}
