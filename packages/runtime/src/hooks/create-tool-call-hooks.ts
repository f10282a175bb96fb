import type { AgentEvent, ToolResultBlock } from '@delegate/core';
import type { ToolCallHooks, ToolCallInfo } from '../query/run-tools.js';
import { type AgentToolHooks, type CommandHook, hookMatches } from './agent-hooks.js';
import { type HookRunResult, runCommandHook } from './run-command-hook.js';

/** Where the hooks of one agent run and report. */
export type ToolCallHookSetup = {
  /** The agent's PreToolUse and PostToolUse hooks. */
  hooks: AgentToolHooks;
  /** Session id given to the hooks. */
  sessionId: string;
  /** The session's project folder (`CLAUDE_PROJECT_DIR`). */
  projectDir: string;
  /** The agent's transcript file, when transcripts are on. */
  transcriptPath?: string;
  /** Reports a hook that failed without blocking. */
  emit: (event: AgentEvent) => void;
};

function resultText(result: ToolResultBlock): string {
  const content = result.content ?? '';
  if (typeof content === 'string') return content;
  return content.map((block) => block.text).join('\n');
}

function commandsFor(matchers: AgentToolHooks['PreToolUse'], toolName: string): CommandHook[] {
  return matchers
    .filter((entry) => hookMatches(entry.matcher, toolName))
    .flatMap((entry) => entry.hooks);
}

function warn(
  setup: ToolCallHookSetup,
  call: ToolCallInfo,
  hook: CommandHook,
  result: HookRunResult,
  event: string,
): void {
  const why =
    result.failure === 'timeout'
      ? 'timed out'
      : (result.failure ?? `exited with code ${result.exitCode}`);
  const stderr = result.stderr.trim();
  setup.emit({
    type: 'agent.warning',
    agentId: call.context.agentId ?? 'main',
    timestamp: new Date().toISOString(),
    code: 'HOOK_FAILED',
    message: `${event} hook "${hook.command}" for ${call.toolName} ${why}${stderr ? `: ${stderr}` : ''}; the call went on (only exit code 2 blocks).`,
  });
}

async function runHooks(options: {
  setup: ToolCallHookSetup;
  event: 'PreToolUse' | 'PostToolUse';
  call: ToolCallInfo;
  extra: Record<string, unknown>;
}): Promise<string[]> {
  const { setup, event, call } = options;
  const commands = commandsFor(setup.hooks[event], call.toolName);
  if (commands.length === 0) return [];
  const input = {
    session_id: setup.sessionId,
    ...(setup.transcriptPath ? { transcript_path: setup.transcriptPath } : {}),
    cwd: call.context.cwd,
    hook_event_name: event,
    tool_name: call.toolName,
    tool_input: call.input,
    tool_use_id: call.toolUseId,
    ...(call.context.agentId ? { agent_id: call.context.agentId } : {}),
    ...(call.context.agentType ? { agent_type: call.context.agentType } : {}),
    ...options.extra,
  };
  // Like Claude Code, every matching hook runs, at the same time.
  const results = await Promise.all(
    commands.map(async (hook) => ({
      hook,
      result: await runCommandHook({
        command: hook.command,
        input,
        cwd: call.context.cwd,
        env: { CLAUDE_PROJECT_DIR: setup.projectDir },
        ...(hook.timeout !== undefined ? { timeoutSeconds: hook.timeout } : {}),
        signal: call.context.abortController.signal,
      }),
    })),
  );
  const blocking: string[] = [];
  for (const { hook, result } of results) {
    if (result.exitCode === 2)
      blocking.push(result.stderr.trim() || `(the hook "${hook.command}" gave no reason)`);
    else if (result.exitCode !== 0 && result.failure !== 'aborted')
      warn(setup, call, hook, result, event);
  }
  return blocking;
}

/**
 * The PreToolUse/PostToolUse hooks of one agent as `query`'s tool-call hooks. Each matching
 * command gets the call as JSON on stdin (`session_id`, `transcript_path`, `cwd`,
 * `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`, and for PostToolUse
 * `tool_response`). Exit code 0 lets the call go on; exit code 2 blocks a PreToolUse call
 * with stderr as the reason the model sees, and gives a PostToolUse hook's stderr to the
 * model; any other ending is reported as an `agent.warning` and the call goes on.
 */
export function createToolCallHooks(setup: ToolCallHookSetup): ToolCallHooks | undefined {
  if (setup.hooks.PreToolUse.length === 0 && setup.hooks.PostToolUse.length === 0) return undefined;
  return {
    beforeToolCall: async (call) => {
      const reasons = await runHooks({ setup, event: 'PreToolUse', call, extra: {} });
      if (reasons.length === 0) return undefined;
      return `A PreToolUse hook blocked this ${call.toolName} call: ${reasons.join('\n')}`;
    },
    afterToolCall: async (call) => {
      const reasons = await runHooks({
        setup,
        event: 'PostToolUse',
        call,
        extra: { tool_response: resultText(call.result) },
      });
      return reasons.length === 0 ? undefined : `PostToolUse hook feedback: ${reasons.join('\n')}`;
    },
  };
}
