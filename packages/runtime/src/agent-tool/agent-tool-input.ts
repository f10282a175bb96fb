import { z } from 'zod';

/** The fields of the Agent tool's input, as the model is shown them. */
export const AgentToolInputFields = z.object({
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
// The budget fields follow the tool's snake_case; the definition keys' camelCase spelling
// (`maxTokens`, `maxCostUsd`) is read too rather than silently dropped.
const BUDGET_SPELLINGS = [
  ['maxTokens', 'max_tokens'],
  ['maxCostUsd', 'max_cost_usd'],
] as const;

function acceptBudgetSpellings(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const input = value as Record<string, unknown>;
  if (!BUDGET_SPELLINGS.some(([camel]) => camel in input)) return value;
  const copy: Record<string, unknown> = { ...input };
  for (const [camel, snake] of BUDGET_SPELLINGS) {
    if (!(camel in copy)) continue;
    if (copy[snake] === undefined) copy[snake] = copy[camel];
    delete copy[camel];
  }
  return copy;
}

/** Input of the Agent tool: {@link AgentToolInputFields}, also accepting `maxTokens`/`maxCostUsd`. */
export const AgentToolInput = z.preprocess(acceptBudgetSpellings, AgentToolInputFields);
/** Input of the Agent tool, as parsed. */
export type AgentToolInput = z.infer<typeof AgentToolInputFields>;
