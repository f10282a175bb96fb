import { z } from 'zod';

/** Input of the Agent tool. */
export const AgentToolInput = z.object({
  description: z.string().min(1).describe('A short (3-5 word) description of the task'),
  prompt: z.string().min(1).describe('The task for the agent to perform'),
  subagent_type: z
    .string()
    .optional()
    .describe('The agent type to use; leave it out to fork yourself when forking is available'),
  model: z
    .string()
    .optional()
    .describe('Model alias (sonnet, opus, haiku) or id; defaults to the agent definition'),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Run in the background and be notified when it ends'),
  name: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('A name to address the agent with SendMessage'),
  isolation: z.literal('worktree').optional().describe('Run the agent in a fresh git worktree'),
  cwd: z
    .string()
    .optional()
    .describe('Working directory of the agent (absolute, or relative to yours)'),
  max_tokens: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Token budget of the agent and everything it starts (input, cache and output tokens); it never gets more than you have left',
    ),
  max_cost_usd: z
    .number()
    .positive()
    .optional()
    .describe(
      'Cost budget in US dollars of the agent and everything it starts; it never gets more than you have left',
    ),
});
/** Input of the Agent tool, as parsed. */
export type AgentToolInput = z.infer<typeof AgentToolInput>;
