import { z } from 'zod';
import {
  DelegateError,
  TOOL_NAMES,
  type SetAppState,
  type TaskState,
  type Tool,
  type ToolUseContext,
} from '@delegate/core';
import {
  type BackgroundShell,
  BackgroundShellRegistry,
  getDefaultBackgroundShellRegistry,
} from './background-shell-registry.js';
import { isReadOnlyCommand } from './read-only-command.js';
import { runShellCommand } from './run-shell-command.js';

/** Default Bash timeout: two minutes. */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
/** Longest Bash timeout allowed: ten minutes. */
export const MAX_BASH_TIMEOUT_MS = 600_000;

/** Input of the Bash tool. */
export const BashInput = z.object({
  command: z.string().min(1).describe('The command line to run with /bin/bash -c.'),
  timeout: z
    .number()
    .int()
    .positive()
    .max(MAX_BASH_TIMEOUT_MS)
    .optional()
    .describe(
      `Timeout in milliseconds (default ${DEFAULT_BASH_TIMEOUT_MS}, at most ${MAX_BASH_TIMEOUT_MS}).`,
    ),
  run_in_background: z
    .boolean()
    .optional()
    .describe(
      'Run the command in the background and return its task id at once; read its output with TaskOutput.',
    ),
  description: z
    .string()
    .optional()
    .describe('What the command does, in 5-10 words, for task lists and logs.'),
});
export type BashInput = z.infer<typeof BashInput>;

/** Structured result of a Bash call. */
export type BashOutput = {
  /** Combined stdout and stderr (capped), for foreground commands. */
  output?: string;
  /** Exit code (null when a signal ended the shell), for foreground commands. */
  exitCode?: number | null;
  /** True when the timeout killed the command. */
  timedOut?: boolean;
  /** Bytes cut from the middle of the output. */
  cutBytes?: number;
  /** Task id of a background command. */
  taskId?: string;
  /** Output file of a background command. */
  outputPath?: string;
};

/** Options of the Bash tool. */
export type BashToolOptions = {
  /** Output cap in bytes for foreground commands (default 30000; head and tail kept). */
  maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Registry of background shells (default: a shared one writing to `os.tmpdir()/delegate-<uid>/tasks`). */
  backgroundShells?: BackgroundShellRegistry;
  /** Output directory of background commands, when no `backgroundShells` registry is given. */
  backgroundOutputDirectory?: string;
  /** Environment of commands (default: this process's). */
  env?: NodeJS.ProcessEnv;
};

function taskStateFor(shell: BackgroundShell, kill: () => void): TaskState {
  return {
    id: shell.taskId,
    type: 'local_bash',
    description: shell.description,
    status: shell.status,
    startTime: shell.startTime,
    isBackgrounded: true,
    kill,
  };
}

function updateTask(
  setTasks: SetAppState,
  taskId: string,
  update: (task: TaskState) => TaskState,
): void {
  setTasks((previous) => {
    const task = previous.tasks[taskId];
    if (task === undefined) return previous;
    return { ...previous, tasks: { ...previous.tasks, [taskId]: update(task) } };
  });
}

async function startInBackground(options: {
  input: BashInput;
  context: ToolUseContext;
  registry: BackgroundShellRegistry;
  env: NodeJS.ProcessEnv | undefined;
}) {
  const { input, context, registry } = options;
  // Task registration must reach the root even from an isolated sub-agent.
  const setTasks = context.setAppStateForTasks ?? context.setAppState;
  // The shell outlives this call: it stops with the agent, not with the call or its loop.
  const signal = context.lifetimeSignal ?? context.abortController.signal;
  let taskId = '';
  const kill = (): void => {
    registry.kill(taskId);
  };
  const onAbort = (): void => kill();
  const shell = await registry.start({
    command: input.command,
    cwd: context.cwd,
    description: input.description ?? input.command.slice(0, 80),
    ...(options.env === undefined ? {} : { env: options.env }),
    onStart: (started) => {
      taskId = started.taskId;
      setTasks((previous) => ({
        ...previous,
        tasks: { ...previous.tasks, [started.taskId]: taskStateFor(started, kill) },
      }));
    },
    onEnd: (ended) => {
      signal.removeEventListener('abort', onAbort);
      updateTask(setTasks, ended.taskId, (task) => ({
        ...task,
        status: ended.status,
        endTime: ended.endTime ?? Date.now(),
        ...(ended.status === 'completed'
          ? { result: `Exit code 0. Output in ${ended.outputPath}` }
          : {}),
        ...(ended.status === 'failed'
          ? { error: `Command exited with code ${ended.exitCode ?? 'none (killed by a signal)'}` }
          : {}),
        ...(ended.stopReason !== undefined ? { error: `Stopped: ${ended.stopReason}.` } : {}),
      }));
    },
  });
  if (signal.aborted) kill();
  else if (registry.get(shell.taskId)?.status === 'running')
    signal.addEventListener('abort', onAbort, { once: true });
  const data: BashOutput = { taskId: shell.taskId, outputPath: shell.outputPath };
  return {
    content:
      `Started in the background as task ${shell.taskId}. Output goes to ${shell.outputPath}; ` +
      'read it with TaskOutput. The command is killed if the agent is aborted.',
    data,
  };
}

/**
 * Creates the Bash tool: runs a command in its own process group with a timeout,
 * capped output and abort support, or in the background as a task registered at the root.
 */
export function createBashTool(options: BashToolOptions = {}): Tool<BashInput, BashOutput> {
  const maxOutputBytes = options.maxOutputBytes ?? 30_000;
  let ownRegistry: BackgroundShellRegistry | undefined;
  const backgroundShells = (): BackgroundShellRegistry => {
    if (options.backgroundShells !== undefined) return options.backgroundShells;
    if (options.backgroundOutputDirectory === undefined) return getDefaultBackgroundShellRegistry();
    ownRegistry ??= new BackgroundShellRegistry({
      outputDirectory: options.backgroundOutputDirectory,
      ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
    });
    return ownRegistry;
  };
  return {
    name: TOOL_NAMES.bash,
    description: () =>
      'Runs a command with /bin/bash -c in the working directory and returns combined stdout and stderr with the ' +
      `exit code. Default timeout ${DEFAULT_BASH_TIMEOUT_MS / 1000} s (timeout, in ms, up to ` +
      `${MAX_BASH_TIMEOUT_MS / 1000} s); on timeout the command and every process it started are killed. Long ` +
      'output keeps its start and end. Use run_in_background for servers and long jobs. Prefer Read, Glob, Grep, ' +
      'Edit and Write over cat, find, grep, sed and echo redirection.',
    inputSchema: BashInput,
    isReadOnly: (input?: BashInput) =>
      typeof input?.command === 'string' && isReadOnlyCommand(input.command),
    isConcurrencySafe: (input?: BashInput) =>
      typeof input?.command === 'string' && isReadOnlyCommand(input.command),
    requiresUserInteraction: () => false,

    async call(input: BashInput, context: ToolUseContext) {
      if (input.run_in_background === true) {
        return startInBackground({
          input,
          context,
          registry: backgroundShells(),
          env: options.env,
        });
      }
      const timeoutMs = Math.min(input.timeout ?? DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS);
      const result = await runShellCommand({
        command: input.command,
        cwd: context.cwd,
        timeoutMs,
        signal: context.abortController.signal,
        maxOutputBytes,
        ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
        ...(options.env === undefined ? {} : { env: options.env }),
      });
      if (result.aborted) {
        throw new DelegateError(
          'ABORTED',
          `Bash command was aborted and its process group killed: ${input.command}`,
          { details: { command: input.command, output: result.output } },
        );
      }
      const output = result.output.trimEnd();
      const data: BashOutput = {
        output: result.output,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        cutBytes: result.cutBytes,
      };
      let status: string;
      if (result.timedOut) {
        status = `Command timed out after ${timeoutMs} ms; it and every process it started were killed.`;
      } else if (result.exitCode === null) {
        status = `Command was killed by ${result.signal ?? 'a signal'}.`;
      } else {
        status = `Exit code: ${result.exitCode}`;
      }
      const isError = result.timedOut || result.exitCode !== 0;
      return {
        content: `${output === '' ? '(no output)' : output}\n${status}`,
        ...(isError ? { isError: true } : {}),
        data,
      };
    },
  };
}
