import { TOOL_NAMES } from '@delegate/core';

/** Agent type of the general-purpose built-in, the default when the caller names none. */
export const GENERAL_PURPOSE_AGENT_TYPE = 'general-purpose';

/** Agent type of the read-only search built-in. */
export const EXPLORE_AGENT_TYPE = 'Explore';

/** Agent type of the read-only planning built-in. */
export const PLAN_AGENT_TYPE = 'Plan';

/** Agent type of the synthetic fork definition. */
export const FORK_AGENT_TYPE = 'fork';

/** Built-in types that run once and are never continued, so their results can skip the continuation trailer. */
export const ONE_SHOT_BUILTIN_AGENT_TYPES: ReadonlySet<string> = new Set([
  EXPLORE_AGENT_TYPE,
  PLAN_AGENT_TYPE,
]);

/** Tools the read-only built-ins may not use: no sub-agents, no leaving plan mode, no file changes. */
export const READ_ONLY_DISALLOWED_TOOLS: readonly string[] = [
  TOOL_NAMES.agent,
  TOOL_NAMES.exitPlanMode,
  TOOL_NAMES.edit,
  TOOL_NAMES.write,
  TOOL_NAMES.notebookEdit,
];
