import { AgentEvent, PermissionMode, TOOL_NAME_PATTERN, Usage } from '@delegate/core';
import { z } from 'zod';

/** Lifecycle of a run: `queued` → `running` → `completed` | `failed` | `cancelled` | `interrupted`. */
export const RunStatus = z
  .enum(['queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted'])
  .meta({ id: 'RunStatus' });
export type RunStatus = z.infer<typeof RunStatus>;

/** Statuses in which a run still has work to do (its event stream stays open). */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running'];

/** A permission rule as written in settings: `Read`, `Bash(git status)`, `Agent(Explore)`. */
const ToolRule = z
  .string()
  .min(1)
  .max(1_000)
  // The tool name as the runtime takes it (TOOL_NAME_PATTERN), then an optional `(content)`.
  .regex(
    new RegExp(`${TOOL_NAME_PATTERN.source.slice(0, -1)}(\\(.*\\))?$`, 's'),
    'must look like Tool or Tool(content), the tool name a letter then letters, digits, "_" and "-"',
  );

/** The main agent's permission mode (`bubble` is for forks only). */
export const MainPermissionMode = PermissionMode.exclude(['bubble']).meta({
  id: 'PermissionMode',
});

/** Body of `POST /v1/runs`. */
export const CreateRunBody = z
  .strictObject({
    /** What the main agent is asked to do. */
    prompt: z.string().trim().min(1).max(200_000),
    /** Agent type the main agent runs as (its prompt, model, mode and tools). */
    agent: z.string().min(1).max(200).optional(),
    /** Model alias or id of the main agent. */
    model: z.string().min(1).max(200).optional(),
    /** Permission mode of the main agent (default `default`: what would ask is denied). */
    permissionMode: MainPermissionMode.optional(),
    /** Rules that approve tool calls without asking. */
    allowedTools: z.array(ToolRule).max(200).optional(),
    /** Rules that refuse tool calls and hide agent types. */
    disallowedTools: z.array(ToolRule).max(200).optional(),
    /** Lets an Agent call without `subagent_type` fork the caller (default false). */
    fork: z.boolean().optional(),
    /** Working directory, inside a configured workspace root (default: the first root). */
    workspace: z.string().min(1).max(4_096).optional(),
  })
  .meta({ id: 'CreateRunBody' });
export type CreateRunBody = z.infer<typeof CreateRunBody>;

/** The options a run was created with, as stored (the workspace is a resolved real path). */
export const RunOptions = CreateRunBody.omit({ prompt: true, workspace: true }).meta({
  id: 'RunOptions',
});
export type RunOptions = z.infer<typeof RunOptions>;

/** Body of `POST /v1/runs/:id/messages`. */
export const SendMessageBody = z
  .strictObject({
    /** The next user message of the main conversation. */
    text: z.string().trim().min(1).max(200_000),
  })
  .meta({ id: 'SendMessageBody' });

/** Body of `POST /v1/runs/:id/resume` (optional). */
export const ResumeRunBody = z
  .strictObject({
    /** Message for the main agent; default a note that the run was interrupted. */
    text: z.string().trim().min(1).max(200_000).optional(),
  })
  .meta({ id: 'ResumeRunBody' });

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Path parameters of a run. */
export const RunParams = z.object({
  id: z
    .string()
    .regex(SAFE_ID, 'must be a run id (letters, digits, "-" and "_")')
    .meta({ param: { name: 'id', in: 'path' }, example: 'run_0123456789abcdef01234567' }),
});

/** Path parameters of an agent of a run. */
export const AgentParams = RunParams.extend({
  agentId: z
    .string()
    .regex(SAFE_ID, 'must be an agent id (letters, digits, "-" and "_")')
    .meta({ param: { name: 'agentId', in: 'path' }, example: 'main' }),
});

/**
 * A whole number written in decimal digits (at most 15), as a query parameter. `z.coerce` would
 * also take `0x10`, `1e1` and an empty value (as 0).
 */
function decimalParameter(message: string) {
  return z
    .string()
    .regex(/^\d{1,15}$/, message)
    .transform(Number);
}

/** The query of a route that takes none: any parameter is a 400 naming it. */
export const NoQuery = z.strictObject({});

/** Query of `GET /v1/runs`. */
export const ListRunsQuery = z.strictObject({
  status: RunStatus.optional().meta({ param: { name: 'status', in: 'query' } }),
  limit: decimalParameter('must be a whole number from 1 to 200, in decimal digits')
    .pipe(z.number().int().min(1).max(200))
    .default(50)
    .meta({ param: { name: 'limit', in: 'query' } }),
  cursor: z
    .string()
    .max(500)
    .optional()
    .meta({ param: { name: 'cursor', in: 'query' } }),
});

/** Query of `GET /v1/runs/:id/events`. */
export const EventsQuery = z.strictObject({
  after: decimalParameter('must be the id of an event (0 or more, in decimal digits)')
    .optional()
    .meta({ param: { name: 'after', in: 'query' } }),
});

/** Query of `GET /v1/runs/:id/transcript`. */
export const TranscriptQuery = z.strictObject({
  agent: z
    .string()
    .regex(SAFE_ID, 'must be an agent id (letters, digits, "-" and "_")')
    .optional()
    .meta({ param: { name: 'agent', in: 'query' } }),
});

/** Query of `GET /v1/agents`. */
export const AgentsQuery = z.strictObject({
  workspace: z
    .string()
    .min(1)
    .max(4_096)
    .optional()
    .meta({ param: { name: 'workspace', in: 'query' } }),
});

/** Token usage with every field present. */
export const UsageView = z
  .object({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cache_creation_input_tokens: z.number().int().nonnegative(),
    cache_read_input_tokens: z.number().int().nonnegative(),
    cache_creation: z.object({
      ephemeral_5m_input_tokens: z.number().int().nonnegative(),
      ephemeral_1h_input_tokens: z.number().int().nonnegative(),
    }),
  })
  .meta({ id: 'Usage' });

/** One agent of a run's tree. */
export const AgentView = z
  .object({
    agentId: z.string(),
    parentAgentId: z.string().nullable(),
    agentType: z.string(),
    description: z.string(),
    mode: z.enum(['main', 'foreground', 'background', 'fork']),
    backgrounded: z.boolean(),
    model: z.string(),
    color: z.string().nullable(),
    status: z.enum(['running', 'completed', 'failed', 'cancelled', 'interrupted']),
    currentTool: z.string().nullable(),
    lastActivity: z.string().nullable(),
    taskId: z.string().nullable(),
    toolUseCount: z.number().int().nonnegative(),
    usage: UsageView,
    costUsd: z.number().nonnegative(),
    priced: z.boolean(),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'Agent' });

/** One task of a run. */
export const TaskView = z
  .object({
    taskId: z.string(),
    agentId: z.string().nullable(),
    type: z.string(),
    description: z.string(),
    status: z.string(),
    backgrounded: z.boolean(),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
  })
  .meta({ id: 'Task' });

/** A run's error. */
export const RunErrorView = z.object({ code: z.string(), message: z.string() }).meta({
  id: 'RunError',
});

/** A run in a list. */
export const RunSummary = z
  .object({
    id: z.string(),
    status: RunStatus,
    prompt: z.string(),
    workspace: z.string(),
    options: RunOptions,
    result: z.string().nullable(),
    error: RunErrorView.nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    startedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
  })
  .meta({ id: 'RunSummary' });

/** A run with its agent tree, tasks and totals. */
export const RunView = RunSummary.extend({
  agents: z.array(AgentView),
  tasks: z.array(TaskView),
  usage: UsageView,
  costUsd: z.number().nonnegative(),
  priced: z.boolean(),
}).meta({ id: 'Run' });

/** A page of runs. */
export const RunListView = z
  .object({ runs: z.array(RunSummary), nextCursor: z.string().nullable() })
  .meta({ id: 'RunList' });

/** Answer of `POST /v1/runs`. */
export const CreatedRunView = z
  .object({ id: z.string(), status: RunStatus, eventsUrl: z.string() })
  .meta({ id: 'CreatedRun' });

/** Answer of the actions on a run or an agent. */
export const ActionView = z
  .object({ runId: z.string(), agentId: z.string().optional(), status: z.string() })
  .meta({ id: 'ActionResult' });

/** Every error answer. */
export const ErrorView = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      field: z.string().optional(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

/** A run changed status. */
export const RunStatusEvent = z.object({
  type: z.literal('run.status'),
  status: RunStatus,
  result: z.string().optional(),
  error: RunErrorView.optional(),
});

/** A user input started a turn. */
export const RunInputEvent = z.object({
  type: z.literal('run.input'),
  kind: z.enum(['start', 'message', 'resume']),
  text: z.string(),
});

/** An agent's usage and cost changed. */
export const AgentUsageEvent = z.object({
  type: z.literal('agent.usage'),
  agentId: z.string(),
  model: z.string(),
  usage: Usage,
  costUsd: z.number().nonnegative(),
  priced: z.boolean(),
});

/** An agent of the tree changed status without a runtime event (cancel, interrupt). */
export const AgentStatusEvent = z.object({
  type: z.literal('agent.status'),
  agentId: z.string(),
  status: z.enum(['running', 'completed', 'failed', 'cancelled', 'interrupted']),
  error: z.string().optional(),
});

/**
 * A task of the run ended without a runtime event: the process that ran it stopped (a crash, a
 * kill, a worker that stopped answering), so it is recorded `killed`.
 */
export const TaskStatusEvent = z.object({
  type: z.literal('task.status'),
  taskId: z.string(),
  /** The sub-agent the task ran, for agent tasks; null for a background shell. */
  agentId: z.string().nullable(),
  status: z.literal('killed'),
  /** Why it ended. */
  error: z.string(),
});

/** A worker took the run over from a worker that stopped answering. */
export const RunFailoverEvent = z.object({
  type: z.literal('run.failover'),
  /** Times the run has moved to another worker in this turn. */
  failovers: z.number().int().positive(),
  /** The most moves allowed; beyond it the run fails. */
  maxFailovers: z.number().int().nonnegative(),
  /** Agents whose turn was in flight and is done again from their last finished turn. */
  retriedAgents: z.array(z.string()),
});

/** An agent's turn that was in flight is done again from its last finished turn. */
export const AgentRetriedEvent = z.object({
  type: z.literal('agent.retried'),
  agentId: z.string(),
  /** Why: `failover` (its worker died) or `handoff` (its worker shut down). */
  reason: z.enum(['failover', 'handoff']),
});

/** Any event of a run's log: the runtime's lifecycle events and the server's own. */
export const RunEventData = z
  .union([
    AgentEvent,
    RunStatusEvent,
    RunInputEvent,
    AgentUsageEvent,
    AgentStatusEvent,
    RunFailoverEvent,
    AgentRetriedEvent,
    TaskStatusEvent,
  ])
  .meta({ id: 'RunEventData' });
export type RunEventData = z.infer<typeof RunEventData>;

/** One event as the log and the SSE stream carry it. */
export const RunEventView = z
  .object({
    seq: z.number().int().positive(),
    runId: z.string(),
    time: z.string(),
    type: z.string(),
    agentId: z.string().nullable(),
    data: RunEventData,
  })
  .meta({ id: 'RunEvent' });

/** Answer of `GET /v1/agents`. */
export const AgentDefinitionsView = z
  .object({
    workspace: z.string(),
    agents: z.array(
      z.object({
        agentType: z.string(),
        whenToUse: z.string(),
        source: z.string(),
        active: z.boolean(),
        overriddenBy: z.string().nullable(),
        model: z.string().nullable(),
        tools: z.array(z.string()).nullable(),
        disallowedTools: z.array(z.string()).nullable(),
        permissionMode: z.string().nullable(),
        background: z.boolean(),
        color: z.string().nullable(),
        filePath: z.string().nullable(),
      }),
    ),
    diagnostics: z.array(
      z.object({
        filePath: z.string(),
        line: z.number().int().optional(),
        reason: z.string(),
        severity: z.enum(['error', 'warning', 'info']),
        agentType: z.string().optional(),
      }),
    ),
  })
  .meta({ id: 'AgentDefinitions' });

/** Answer of `/healthz` and `/readyz`. */
export const HealthView = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.record(z.string(), z.string()).optional(),
  })
  .meta({ id: 'Health' });
