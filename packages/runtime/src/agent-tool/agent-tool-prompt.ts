import type { AgentDefinition } from '@delegate/core';
import { buildForkRulesForParent } from '@delegate/fork-cache';

/** One line describing an agent type for the Agent tool's prompt or reminder. */
export function formatAgentLine(agent: AgentDefinition): string {
  const allowed =
    agent.tools === undefined || (agent.tools.length === 1 && agent.tools[0] === '*')
      ? 'all tools'
      : agent.tools.join(', ');
  const denied = agent.disallowedTools?.length ? `; not: ${agent.disallowedTools.join(', ')}` : '';
  return `- ${agent.agentType}: ${agent.whenToUse.trim()} (Tools: ${allowed}${denied})`;
}

const AGENT_LIST_OPENING =
  '<system-reminder>\nAgent types available to the Agent tool (pass one as subagent_type):';

/** The agent list as a `<system-reminder>` message body. */
export function buildAgentListReminder(agents: readonly AgentDefinition[]): string {
  return [AGENT_LIST_OPENING, ...agents.map(formatAgentLine), '</system-reminder>'].join('\n');
}

/** Whether `text` is an agent list made by {@link buildAgentListReminder}. */
export function isAgentListReminder(text: string): boolean {
  return text.startsWith(AGENT_LIST_OPENING);
}

/**
 * The Agent tool's description. With `listInMessages` the list of agents is left out (it
 * goes into a `<system-reminder>` message instead) so the tools block, and with it the
 * prompt cache, stays stable when agents come and go. With forking on it ends with the fork
 * worker rules (`buildForkRulesForParent`), byte-identical on every request.
 */
export function getAgentToolPrompt(options: {
  agents: readonly AgentDefinition[];
  forkEnabled: boolean;
  listInMessages: boolean;
}): string {
  const parts = [
    'Start a sub-agent that works on a task on its own and returns one report.',
    '',
    'Use it for tasks that need many steps or much searching, and to keep long intermediate output out of your own context. Give each agent a complete, self-contained prompt: it does not see this conversation (except a fork, which does), so say what to do, what is already known, and what to return.',
    '',
    options.listInMessages
      ? 'The available agent types are listed in <system-reminder> messages in the conversation.'
      : `Available agent types:\n${options.agents.map(formatAgentLine).join('\n')}`,
    '',
    'Usage:',
    '- Launch independent agents in one message (several Agent calls) so they run at the same time.',
    '- The report comes back to you, not to the user: summarise what matters for the user yourself.',
    '- run_in_background: true starts the agent and returns at once; you are sent a <task-notification> when it ends. Do not poll or sleep waiting for it.',
    '- To continue an agent that has finished, use SendMessage with its agent id; its context is kept.',
    '- isolation: "worktree" runs the agent in a fresh git worktree; its changes stay on a branch.',
  ];
  if (options.forkEnabled) {
    parts.push(
      '',
      '## Forking',
      'Leave out subagent_type to fork yourself: the fork sees this whole conversation and shares your prompt cache, so it is cheap.',
      '- Fork when intermediate tool output is not worth keeping in your context: open-ended research, or implementation that needs more than a couple of edits.',
      '- For research that splits into independent questions, launch several forks in one message.',
      '- Do not set model on a fork: another model cannot reuse your cache.',
      '',
      // The rules every fork follows sit here, in the prefix the parent's own requests
      // cache, so no fork writes them again (each fork's message holds a short notice).
      buildForkRulesForParent(),
    );
  }
  return parts.join('\n');
}
