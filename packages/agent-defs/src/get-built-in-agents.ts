import { type AgentDefinition } from '@delegate/core';
import { createExploreAgent } from './explore-agent.js';
import { GENERAL_PURPOSE_AGENT } from './general-purpose-agent.js';
import { PLAN_AGENT } from './plan-agent.js';

/** Options of {@link getBuiltInAgents}. */
export type BuiltInAgentsOptions = {
  /** Model of the Explore agent; default `haiku`. */
  exploreModel?: string;
};

function copy(agent: AgentDefinition): AgentDefinition {
  return {
    ...agent,
    ...(agent.tools === undefined ? {} : { tools: [...agent.tools] }),
    ...(agent.disallowedTools === undefined ? {} : { disallowedTools: [...agent.disallowedTools] }),
  };
}

/** Returns fresh copies of the selectable built-in agents: general-purpose, Explore and Plan (not the fork definition). */
export function getBuiltInAgents(options: BuiltInAgentsOptions = {}): AgentDefinition[] {
  return [
    copy(GENERAL_PURPOSE_AGENT),
    createExploreAgent(options.exploreModel === undefined ? {} : { model: options.exploreModel }),
    copy(PLAN_AGENT),
  ];
}
