import { DelegateError, errorMessage, isAbortError } from '@delegate/core';
import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode } from '../exit-codes.js';
import { listenForInterrupts, stopReasonFor } from '../live/interrupt-keys.js';
import { STOPPING_NOTE, holdStopSignals } from '../session/hold-stop-signals.js';
import type { LiveView } from '../live/live-view.js';
import type { RunExitReason, RunRenderer, RunResult, StopReason } from '../output/run-renderer.js';
import type { CliSession } from '../session/create-cli-session.js';
import { noteStop } from '../session/stopped-agents.js';
import type { AgentTree } from '../usage/agent-tree.js';

/** Exit code of a run that ended for `reason`. */
export function exitCodeFor(reason: RunExitReason): ExitCode {
  switch (reason) {
    case 'completed':
      return EXIT_CODES.success;
    case 'interrupted':
      return EXIT_CODES.interrupted;
    case 'terminated':
      return EXIT_CODES.terminated;
    case 'hangup':
      return EXIT_CODES.hangup;
    case 'output_closed':
      return EXIT_CODES.outputClosed;
    case 'max_turns':
    case 'aborted':
    case 'error':
      return EXIT_CODES.runFailed;
  }
}

function classifyFailure(error: unknown, stoppedBy: StopReason | undefined): RunExitReason {
  if (stoppedBy) return stoppedBy;
  if (DelegateError.hasCode(error, 'MAX_TURNS')) return 'max_turns';
  if (isAbortError(error) || DelegateError.hasCode(error, 'ABORTED')) return 'aborted';
  return 'error';
}

/**
 * What the person is told when the main agent used its last turn: the limit, where it was set
 * (`--max-turns`, or `maxTurns` in a settings file) and how to raise it.
 */
export function mainTurnLimitMessage(limit: number, from: string | undefined): string {
  if (from === undefined || from === '--max-turns')
    return `The main agent reached --max-turns ${limit} before finishing. Pass a higher --max-turns, or give it a smaller task.`;
  return `The main agent reached its turn limit of ${limit} (maxTurns in ${from}) before finishing. Pass a higher --max-turns, or give it a smaller task.`;
}

/** The message of a failed turn; the main agent's turn limit is told in the CLI's words. */
function failureMessage(error: unknown, options: TurnOptions): string {
  if (
    DelegateError.hasCode(error, 'MAX_TURNS') &&
    error.details?.['querySource'] === 'repl_main_thread'
  ) {
    const limit = error.details['maxTurns'];
    if (typeof limit === 'number') return mainTurnLimitMessage(limit, options.maxTurnsFrom);
  }
  return errorMessage(error);
}

const STOP_MESSAGES: Record<StopReason, string> = {
  interrupted: 'Stopped by Ctrl-C.',
  terminated: 'Stopped by SIGTERM.',
  hangup: 'Stopped: the terminal closed (SIGHUP).',
  output_closed: 'Stopped: the program reading the output went away.',
};

/** Options of `runTurn`. */
export type TurnOptions = {
  cli: CliSession;
  /** The user's message ('' to answer waiting notifications only). */
  prompt: string;
  maxTurns?: number | undefined;
  /** Where `maxTurns` was set: `--max-turns` or a settings file (said when the limit is reached). */
  maxTurnsFrom?: string | undefined;
  /** Keep going while background agents run (each notification starts another turn). */
  waitForBackground: boolean;
  tree: AgentTree;
  renderer: RunRenderer;
  /** What stopped the run from outside, if anything (it wins over `aborted`). */
  stoppedBy: () => StopReason | undefined;
};

/** One turn of the main agent (and, with `waitForBackground`, the turns notifications start). */
export async function runTurn(
  options: TurnOptions,
): Promise<Omit<RunResult, 'tree' | 'sessionId'>> {
  const { cli, tree, renderer } = options;
  const startedAt = Date.now();
  let durationApiMs = 0;
  let requestStartedAt: number | undefined;
  let numTurns = 0;
  let text = '';
  let exitReason: RunExitReason = 'completed';
  let failure: string | undefined;
  tree.setMainStatus('running');
  try {
    const answer = await cli.session.send(options.prompt, {
      waitForBackground: options.waitForBackground,
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      onEvent: (raw) => {
        if (raw.type === 'stream_request_start') requestStartedAt = Date.now();
        // What a renderer prints or the tree keeps carries no secret of the session.
        const event = raw.type === 'stream_event' ? raw : cli.redact(raw);
        if (event.type === 'assistant') {
          numTurns++;
          if (requestStartedAt !== undefined) durationApiMs += Date.now() - requestStartedAt;
          requestStartedAt = undefined;
        }
        if (event.type === 'assistant' || event.type === 'user') tree.addMainMessage(event);
        renderer.onMainEvent(event);
      },
    });
    text = cli.redact(answer.text);
    // Ctrl-C while the main agent waits for a background agent ends a completed turn too.
    const stopped = options.stoppedBy();
    if (stopped) exitReason = stopped;
    else if (answer.outcome.reason === 'aborted') exitReason = 'aborted';
  } catch (error) {
    failure = cli.redact(failureMessage(error, options));
    exitReason = classifyFailure(error, options.stoppedBy());
  }
  tree.setMainStatus(
    exitReason === 'completed'
      ? 'completed'
      : exitReason === 'max_turns' || exitReason === 'error'
        ? 'failed'
        : 'killed',
    failure,
  );
  return {
    text,
    exitReason,
    ...(failure !== undefined ? { error: failure } : {}),
    durationMs: Date.now() - startedAt,
    durationApiMs,
    numTurns,
  };
}

/**
 * Runs `prompt` on a CLI session to the end, background agents included (their
 * notifications start further turns), feeding the tree and the renderer, with Ctrl-C
 * (stop everything; twice within 2 s: quit at once) and Ctrl-B (background the running
 * sub-agent). Whatever still runs afterwards is stopped, and the session's resources closed.
 */
export async function executeRun(options: {
  cli: CliSession;
  prompt: string;
  maxTurns?: number | undefined;
  /** Where `maxTurns` was set (see `TurnOptions`). */
  maxTurnsFrom?: string | undefined;
  renderer: RunRenderer;
  tree: AgentTree;
  io: CliIo;
  /** The live view, when there is one: keys come through raw terminal input and notes go above it. */
  liveView?: LiveView | undefined;
  /** A second Ctrl-C within two seconds (default: exit 130 at once). */
  forceExit?: () => void;
}): Promise<RunResult> {
  const { cli, renderer, tree, liveView } = options;
  const { session } = cli;
  const stopEvents = session.events.on((raw) => {
    const event = cli.redact(raw);
    tree.handleEvent(event);
    renderer.onAgentEvent(event);
  });
  const warn = (message: string): void =>
    liveView
      ? liveView.note(`delegate: ${message}`)
      : void options.io.stderr.write(`delegate: ${message}\n`);
  let stoppedBy: StopReason | undefined;
  const stop = (reason: StopReason): void => {
    // Recorded before the abort ends them, so a later --resume says they were stopped.
    if (stoppedBy === undefined) noteStop(session, STOP_MESSAGES[reason], warn);
    stoppedBy ??= reason;
    session.abort(new DelegateError('ABORTED', STOP_MESSAGES[reason]));
  };
  const onOutputClosed = (): void => stop('output_closed');
  options.io.outputClosed?.addEventListener('abort', onOutputClosed, { once: true });
  const stopKeys = listenForInterrupts(
    options.io.stdin,
    {
      onInterrupt: (signal) => {
        liveView?.note('Stopping every agent… (Ctrl-C again to quit at once)');
        stop(stopReasonFor(signal));
      },
      onForce: options.forceExit ?? (() => process.exit(EXIT_CODES.interrupted)),
      onBackground: () => {
        const current = session.foregroundAgents().at(-1);
        if (current && session.backgroundAgent(current)) {
          liveView?.note(`Moved ${tree.get(current)?.agentType ?? current} to the background.`);
        }
      },
    },
    { raw: liveView !== undefined },
  );
  let exitReason: RunExitReason = 'error';
  try {
    const result = await runTurn({
      cli,
      prompt: options.prompt,
      maxTurns: options.maxTurns,
      maxTurnsFrom: options.maxTurnsFrom,
      waitForBackground: true,
      tree,
      renderer,
      stoppedBy: () => stoppedBy,
    });
    exitReason = result.exitReason;
    return { ...result, sessionId: cli.sessionId, tree };
  } finally {
    // A run that ended before its background agents (its main agent failed) stops them: a
    // later --resume says so, rather than that they were lost.
    if (stoppedBy === undefined)
      noteStop(session, `Stopped because the run ended (${exitReason.replace('_', ' ')})`, warn);
    stopKeys();
    options.io.outputClosed?.removeEventListener('abort', onOutputClosed);
    // Whatever still runs (a background shell, an agent a failed turn left) stops with the run,
    // and the background shells' logs are deleted. A stop signal meanwhile waits for it.
    await holdStopSignals(
      async () => {
        await session.close();
        stopEvents();
        await cli.close();
      },
      () => warn(STOPPING_NOTE),
    );
  }
}
