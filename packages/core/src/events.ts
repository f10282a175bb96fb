import { z } from 'zod';
import { AgentColor } from './agent-definition.js';
import { Message } from './message.js';
import { Usage } from './usage.js';

const EventBase = {
  /** Agent the event is about. */
  agentId: z.string(),
  /** ISO 8601 time of the event. */
  timestamp: z.string(),
};

/** How a sub-agent runs. */
export const AgentRunMode = z.enum(['foreground', 'background', 'fork']);
export type AgentRunMode = z.infer<typeof AgentRunMode>;

/** A sub-agent started. */
export const AgentStartedEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.started'),
  /** Agent that spawned it; absent for the main agent. */
  parentAgentId: z.string().optional(),
  /** Agent type (`fork` for forks). */
  agentType: z.string(),
  /** Short description from the Agent tool call. */
  description: z.string(),
  /** How it runs. */
  mode: AgentRunMode,
  /** Model it runs on. */
  model: z.string(),
  /** Task id, for background agents. */
  taskId: z.string().optional(),
  /** Id of the `Agent` tool call that started it (absent for a resumed agent). */
  toolUseId: z.string().optional(),
  /** Display color from the agent's definition; absent when the definition sets none. */
  color: AgentColor.optional(),
  /**
   * What the agent may spend as it starts: the least of its own budget and what every
   * ancestor has left. Absent when no budget bounds it.
   */
  remaining: z
    .object({
      /** Tokens left (never below 0). */
      tokens: z.number().int().nonnegative().optional(),
      /** US dollars left (never below 0). */
      costUsd: z.number().nonnegative().optional(),
    })
    .optional(),
});

/** A sub-agent's conversation gained a message: a model response, or the tool results it got. */
export const AgentMessageEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.message'),
  /** The message, as added to the agent's conversation. */
  message: Message,
});

/** A sub-agent made progress (a message arrived). */
export const AgentProgressEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.progress'),
  /** Messages so far. */
  messageCount: z.number().int().nonnegative(),
  /** Tool calls so far. */
  toolUseCount: z.number().int().nonnegative(),
  /** Context size of the latest response (all its input and output tokens). */
  tokens: z.number().int().nonnegative(),
  /** Last thing the agent did. */
  lastActivity: z.string().optional(),
});

/** A sub-agent called a tool. */
export const AgentToolUseEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.tool_use'),
  /** Tool name. */
  toolName: z.string(),
  /** Id of the `tool_use` block. */
  toolUseId: z.string(),
  /** Tool input. */
  input: z.unknown(),
});

/** A foreground sub-agent was moved to the background. */
export const AgentBackgroundedEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.backgrounded'),
  /** Task that now tracks it. */
  taskId: z.string(),
});

/** A foreground sub-agent has run long enough that the caller may move it to the background. */
export const AgentBackgroundHintEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.background_hint'),
  /** How long the agent has been running. */
  elapsedMs: z.number().nonnegative(),
});

/** What is left of a budget; a field is absent when that dimension has no limit. */
export const BudgetRemaining = z.object({
  /** Tokens left (never below 0). */
  tokens: z.number().int().nonnegative().optional(),
  /** US dollars left (never below 0). */
  costUsd: z.number().nonnegative().optional(),
});
export type BudgetRemaining = z.infer<typeof BudgetRemaining>;

/**
 * An agent's usage after one of its responses was kept (retried attempts never count),
 * with what is left of its budget and of the session's. `agentId` is `main` for the main agent.
 */
export const AgentCostEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.cost'),
  /** Usage of the response just kept. */
  usage: Usage,
  /** Usage of every response the agent kept so far (all its runs). */
  totalUsage: Usage,
  /** Cost in US dollars of `totalUsage`. */
  costUsd: z.number().nonnegative(),
  /** Cost in US dollars of the agent and all its descendants. */
  treeCostUsd: z.number().nonnegative(),
  /** False when the model is missing from the price table (its cost counts as 0). */
  priced: z.boolean(),
  /** What the agent may still spend: the least of its own budget and every ancestor's. */
  remaining: BudgetRemaining,
  /** What the whole session may still spend (its `maxTokens`/`maxCostUsd`). */
  sessionRemaining: BudgetRemaining,
});

/** A sub-agent finished. */
export const AgentCompletedEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.completed'),
  /** Task id, for background agents. */
  taskId: z.string().optional(),
  /** Final report text. */
  result: z.string(),
  /** Token usage of the run. */
  usage: Usage,
  /**
   * Cost of the run in US dollars, from the session's price table (the runtime always sets
   * it; optional so events recorded before it existed still parse).
   */
  costUsd: z.number().nonnegative().optional(),
  /** Wall-clock duration. */
  durationMs: z.number().nonnegative(),
  /** Tool calls made. */
  toolUseCount: z.number().int().nonnegative(),
});

/** A sub-agent failed. */
export const AgentFailedEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.failed'),
  /** Task id, for background agents. */
  taskId: z.string().optional(),
  /** What went wrong. */
  error: z.string(),
  /** DelegateError code, when there is one (`BUDGET_EXCEEDED` when its budget ran out). */
  code: z.string().optional(),
  /** Token usage of the run up to its end (what it kept). */
  usage: Usage.optional(),
  /** Cost of that usage in US dollars. */
  costUsd: z.number().nonnegative().optional(),
});

/** A task notification was queued for the parent's next turn. */
export const AgentNotificationEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.notification'),
  /** Task the notification is about. */
  taskId: z.string(),
  /** Final status of the task. */
  status: z.enum(['completed', 'failed', 'killed']),
  /** The notification text as the parent will see it. */
  text: z.string(),
});

/**
 * Something about a sub-agent is not as its definition asks (a part Delegate does not
 * run, such as skills, or an MCP server of its own that could not start), or a hook failed
 * without blocking.
 */
export const AgentWarningEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.warning'),
  /** What kind of warning (`SKILLS_IGNORED`, `MCP_SERVERS_IGNORED`, `MCP_SERVER_FAILED`, `HOOKS_IGNORED`, `HOOK_FAILED`, …). */
  code: z.string(),
  /** What happened and what to do. */
  message: z.string(),
});

/**
 * A sub-agent's run ended and no later request will read its cache chain, so the
 * server may evict it (a proxy can forward this as a hint).
 */
export const AgentCacheEvictableEvent = z.object({
  ...EventBase,
  /** Event discriminator. */
  type: z.literal('agent.cache_evictable'),
  /** Request id of the run's last response. */
  lastRequestId: z.string(),
});

/** Every lifecycle event of a sub-agent. */
export const AgentEvent = z.discriminatedUnion('type', [
  AgentStartedEvent,
  AgentProgressEvent,
  AgentMessageEvent,
  AgentToolUseEvent,
  AgentBackgroundedEvent,
  AgentBackgroundHintEvent,
  AgentCompletedEvent,
  AgentFailedEvent,
  AgentNotificationEvent,
  AgentWarningEvent,
  AgentCacheEvictableEvent,
  AgentCostEvent,
]);
export type AgentEvent = z.infer<typeof AgentEvent>;
export type AgentEventType = AgentEvent['type'];
