import { DelegateError, checkOptionalObject } from '@delegate/core';
import {
  DEFAULT_ALL_AGENT_DISALLOWED_TOOLS,
  DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS,
  DEFAULT_CUSTOM_AGENT_DISALLOWED_TOOLS,
  DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS,
} from './default-tool-sets.js';

/** A set of tool names, given as a `Set` or an array. */
export type ToolNameList = ReadonlySet<string> | readonly string[];

/** Replaces the default tool sets and says whether the agent is an in-process teammate. */
export type ToolFilterPolicy = {
  /** Tools removed for every sub-agent (default {@link DEFAULT_ALL_AGENT_DISALLOWED_TOOLS}). */
  allAgentDisallowed?: ToolNameList | undefined;
  /** Tools removed for agents that are not built in (default {@link DEFAULT_CUSTOM_AGENT_DISALLOWED_TOOLS}). */
  customAgentDisallowed?: ToolNameList | undefined;
  /** The only non-MCP tools async agents keep (default {@link DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS}). */
  asyncAllowed?: ToolNameList | undefined;
  /** Tools an in-process teammate keeps (default {@link DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS}). */
  teammateAllowed?: ToolNameList | undefined;
  /** True when the agent runs as an in-process teammate of an agent team. */
  isInProcessTeammate?: boolean | undefined;
  /** True when the agent-teams gate is on (see `isAgentSwarmsEnabled`). */
  agentSwarmsEnabled?: boolean | undefined;
};

/** A policy with every set filled in. */
export type ResolvedToolFilterPolicy = {
  /** Tools removed for every sub-agent. */
  allAgentDisallowed: ReadonlySet<string>;
  /** Tools removed for agents that are not built in. */
  customAgentDisallowed: ReadonlySet<string>;
  /** The only non-MCP tools async agents keep. */
  asyncAllowed: ReadonlySet<string>;
  /** Tools an in-process teammate keeps; empty unless the teammate exemption applies. */
  teammateExempt: ReadonlySet<string>;
};

function toSet(
  field: string,
  list: ToolNameList | undefined,
  fallback: ReadonlySet<string>,
): ReadonlySet<string> {
  if (list === undefined) return fallback;
  if (list instanceof Set) return list;
  // A string is iterable too: `new Set('Agent')` would be the letters A, g, e, n, t.
  if (!Array.isArray(list) || list.some((name) => typeof name !== 'string')) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `policy.${field} must be a Set or an array of tool names, such as ['Agent'], got ${typeof list === 'string' ? `the text ${JSON.stringify(list)}` : Array.isArray(list) ? 'an array holding something other than text' : typeof list}.`,
    );
  }
  return new Set(list);
}

/**
 * Fills in the default sets of a policy; the teammate set applies only to teammates with the
 * gate on. A set given as something other than a `Set` or an array of names (a string, from
 * JSON say) is refused with `INVALID_ARGUMENT` naming it.
 */
export function resolveToolFilterPolicy(policy: ToolFilterPolicy = {}): ResolvedToolFilterPolicy {
  checkOptionalObject('resolveToolFilterPolicy()', 'policy', policy);
  const teammate = policy.isInProcessTeammate === true && policy.agentSwarmsEnabled === true;
  return {
    allAgentDisallowed: toSet(
      'allAgentDisallowed',
      policy.allAgentDisallowed,
      DEFAULT_ALL_AGENT_DISALLOWED_TOOLS,
    ),
    customAgentDisallowed: toSet(
      'customAgentDisallowed',
      policy.customAgentDisallowed,
      DEFAULT_CUSTOM_AGENT_DISALLOWED_TOOLS,
    ),
    asyncAllowed: toSet('asyncAllowed', policy.asyncAllowed, DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS),
    teammateExempt: teammate
      ? toSet('teammateAllowed', policy.teammateAllowed, DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS)
      : new Set<string>(),
  };
}
