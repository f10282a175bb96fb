import { TOOL_NAMES } from '@delegate/core';

/**
 * Tools removed for every sub-agent: the Agent tool (under its name and its legacy alias
 * `Task`, so a sub-agent cannot spawn more agents) and the tools that only make sense on
 * the main thread (reading or stopping background tasks, leaving plan mode, asking the
 * user a question).
 */
export const DEFAULT_ALL_AGENT_DISALLOWED_TOOLS: ReadonlySet<string> = new Set([
  TOOL_NAMES.agent,
  TOOL_NAMES.agentLegacy,
  TOOL_NAMES.taskOutput,
  TOOL_NAMES.taskStop,
  TOOL_NAMES.exitPlanMode,
  TOOL_NAMES.askUserQuestion,
]);

/**
 * Tools removed for agents that are not built in. It starts out equal to
 * {@link DEFAULT_ALL_AGENT_DISALLOWED_TOOLS} but is a separate knob: a host that trusts
 * its built-in agents more can deny custom agents extra tools here.
 */
export const DEFAULT_CUSTOM_AGENT_DISALLOWED_TOOLS: ReadonlySet<string> = new Set(
  DEFAULT_ALL_AGENT_DISALLOWED_TOOLS,
);

/**
 * The only non-MCP tools a background (async) agent keeps: file, search, shell, web,
 * todo and skill tools, none of which needs a person to answer.
 */
export const DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS: ReadonlySet<string> = new Set([
  TOOL_NAMES.read,
  TOOL_NAMES.write,
  TOOL_NAMES.edit,
  TOOL_NAMES.notebookEdit,
  TOOL_NAMES.glob,
  TOOL_NAMES.grep,
  TOOL_NAMES.bash,
  TOOL_NAMES.webFetch,
  TOOL_NAMES.webSearch,
  TOOL_NAMES.todoWrite,
  TOOL_NAMES.skill,
]);

/**
 * Tools an in-process teammate keeps (when the agent-teams gate is on) even though the
 * deny sets or the async allow-list would remove them: the Agent tool (to spawn
 * foreground helpers) and the shared task-list and messaging tools.
 */
export const DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS: ReadonlySet<string> = new Set([
  TOOL_NAMES.agent,
  TOOL_NAMES.agentLegacy,
  TOOL_NAMES.taskCreate,
  TOOL_NAMES.taskGet,
  TOOL_NAMES.taskList,
  TOOL_NAMES.taskUpdate,
  TOOL_NAMES.sendMessage,
]);
