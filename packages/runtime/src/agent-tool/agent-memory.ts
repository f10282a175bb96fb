import {
  type AgentDefinition,
  type CanUseTool,
  type PermissionMode,
  type Tool,
  type ToolUseContext,
  TOOL_NAMES,
  errorMessage,
  toolMatchesName,
} from '@delegate/core';
import { prepareAgentMemory } from '@delegate/memory';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { loadTools } from '../util/load-tools.js';

/** An agent's memory as a spawn sets it up. */
export type AgentMemorySetup = {
  /** The memory section of its system prompt. */
  prompt: string;
  /** Its memory folder, once it exists and is safe to open (absent otherwise). */
  directory?: string;
  /** Why the folder cannot be used, when it cannot. */
  warning?: string;
};

/**
 * Sets up the memory of an agent whose definition has `memory`: the prompt section and the
 * folder, created before the agent starts. `project` and `local` memory resolve against
 * the session's project folder, never the agent's own cwd (a worktree copy or a
 * subdirectory), so every agent of a type shares one memory. A folder that cannot be
 * created or is unsafe (a link out of the project) is left out of the agent's allowed
 * directories and reported in `warning`.
 */
export async function setUpAgentMemory(
  runtime: AgentRuntime,
  agent: AgentDefinition,
): Promise<AgentMemorySetup | undefined> {
  if (!agent.memory) return undefined;
  const prepared = prepareAgentMemory(agent.agentType, agent.memory, {
    cwd: runtime.rootCwd,
    ...(runtime.options.homeDir ? { homeDir: runtime.options.homeDir } : {}),
    // Reported through `ready` below, as a warning event of the agent.
    onError: () => undefined,
  });
  try {
    await prepared.ready;
    return { prompt: prepared.prompt, directory: prepared.directory };
  } catch (error) {
    return {
      prompt: prepared.prompt,
      warning: `The ${agent.memory} memory folder of ${agent.agentType} (${prepared.directory}) cannot be used: ${errorMessage(error)}. The agent runs without write access to it.`,
    };
  }
}

// Modes in which an agent may write files at all (with or without asking).
const WRITING_MODES: ReadonlySet<PermissionMode> = new Set(['default', 'dontAsk', 'bubble']);
const FILE_EDIT_TOOLS = [TOOL_NAMES.write, TOOL_NAMES.edit, TOOL_NAMES.notebookEdit];

async function isMemoryWrite(options: {
  tool: Tool;
  input: unknown;
  context: ToolUseContext;
  directory: string;
}): Promise<boolean> {
  const { tool, input, context, directory } = options;
  if (!FILE_EDIT_TOOLS.some((name) => toolMatchesName(tool, name))) return false;
  const record =
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const path = record['file_path'] ?? record['notebook_path'];
  if (typeof path !== 'string') return false;
  try {
    // Symbolic links are followed: a link inside the folder that points out of it is no memory write.
    const { resolvePathWithinRoots } = await loadTools();
    await resolvePathWithinRoots({ path, cwd: context.cwd, roots: [directory] });
    return true;
  } catch {
    return false;
  }
}

function withMode(context: ToolUseContext, mode: PermissionMode): ToolUseContext {
  return {
    ...context,
    getAppState: () => {
      const state = context.getAppState();
      return { ...state, toolPermissionContext: { ...state.toolPermissionContext, mode } };
    },
  };
}

/**
 * Wraps an agent's permission check so file edits inside its memory folder need no
 * approval in every mode where the agent may write at all (`default`, `dontAsk`, `bubble`
 * are judged as `acceptEdits` for those paths; deny rules still apply; `plan` still
 * refuses).
 */
export function allowMemoryWrites(canUseTool: CanUseTool, directory: string): CanUseTool {
  return async (tool, input, context, assistantMessage, toolUseId) => {
    const mode = context.getAppState().toolPermissionContext.mode;
    if (WRITING_MODES.has(mode) && (await isMemoryWrite({ tool, input, context, directory })))
      return canUseTool(tool, input, withMode(context, 'acceptEdits'), assistantMessage, toolUseId);
    return canUseTool(tool, input, context, assistantMessage, toolUseId);
  };
}
