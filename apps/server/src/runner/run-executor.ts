import { DelegateError, errorMessage, isAbortError } from '@delegate/core';
import type { Logger } from 'pino';
import type { RunEventHub } from '../events/run-event-hub.js';
import type { RunEventData } from '../http/schemas.js';
import type { RunJob } from '../queue/run-queue.js';
import type { AgentStatus, RunError, RunInput, RunRecord, RunStore } from '../store/run-store.js';
import { AgentTree, MAIN_AGENT_ID, type TreeChange } from './agent-tree.js';
import { type SessionDefaults, prepareSession } from './prepare-session.js';
import { SessionRunner, type SessionRunnerOptions } from './session-runner.js';

/** How a turn ended, as the run records it. */
type TurnEnd = {
  status: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  result: string | null;
  error: RunError | null;
};

/** A run that is working now. */
type ActiveRun = {
  runner: SessionRunner | undefined;
  tree: AgentTree | undefined;
  /** Why the run is being stopped, once it is. */
  stopping: 'cancel' | 'shutdown' | undefined;
  /** Store writes of the tree, in order. */
  writes: Promise<void>;
};

/** Lifecycle events after which the task list has changed. */
const TASK_EVENTS = new Set([
  'agent.started',
  'agent.backgrounded',
  'agent.completed',
  'agent.failed',
  'agent.notification',
]);

const RESUME_NOTE =
  'The server restarted while you were working, so your previous turn was interrupted. Continue the task from where you left off, then give your report.';

function now(): string {
  return new Date().toISOString();
}

/** What the user asked for in this turn. */
function inputText(run: RunRecord, input: RunInput): string {
  if (input.kind === 'start') return run.prompt;
  if (input.kind === 'message') return input.text;
  return input.text ?? RESUME_NOTE;
}

/**
 * Runs the turns of runs: takes a queued run, opens (or reuses, or restores from its
 * transcripts) its session, streams what happens into the agent tree, the store and the
 * event log, and records how the turn ended. Also stops runs and agents on request.
 */
export class RunExecutor {
  private readonly store: RunStore;
  private readonly hub: RunEventHub;
  private readonly logger: Logger;
  private readonly defaults: SessionDefaults;
  private readonly redact: <T>(value: T) => T;
  private readonly idleLimit: number;
  private readonly active = new Map<string, ActiveRun>();
  /** Sessions of finished turns, oldest first, for quick continuation. */
  private readonly idle = new Map<string, SessionRunner>();
  private readonly onIdle: (() => void) | undefined;

  constructor(options: {
    store: RunStore;
    hub: RunEventHub;
    logger: Logger;
    defaults: SessionDefaults;
    redact: <T>(value: T) => T;
    idleSessions: number;
    /** Called each time the last working run's turn ends. */
    onIdle?: () => void;
  }) {
    this.store = options.store;
    this.hub = options.hub;
    this.logger = options.logger;
    this.defaults = options.defaults;
    this.redact = options.redact;
    this.idleLimit = options.idleSessions;
    this.onIdle = options.onIdle;
  }

  /** The queue's handler: runs one turn of `job.runId`. */
  handle = async (job: RunJob, signal: AbortSignal): Promise<void> => {
    const queued = await this.store.getRun(job.runId);
    if (!queued || queued.status !== 'queued') return;
    const input = queued.pending ?? { kind: 'start' };
    const run = await this.store.transitionRun({
      runId: job.runId,
      from: ['queued'],
      patch: { status: 'running', pending: null, startedAt: now(), endedAt: null, error: null },
    });
    // Cancelled while it waited.
    if (!run) return;
    const release = this.hub.retain(run.id);
    const active: ActiveRun = {
      runner: undefined,
      tree: undefined,
      stopping: undefined,
      writes: Promise.resolve(),
    };
    this.active.set(run.id, active);
    const onShutdown = (): void => this.stop(active, 'shutdown', signal.reason);
    signal.addEventListener('abort', onShutdown, { once: true });
    try {
      void this.hub.publish(run.id, { type: 'run.status', status: 'running' });
      void this.hub.publish(run.id, {
        type: 'run.input',
        kind: input.kind,
        text: this.redact(inputText(run, input)),
      });
      const end = await this.runTurn({ run, input, active });
      await this.finishTurn({ run, active, end });
    } finally {
      signal.removeEventListener('abort', onShutdown);
      this.active.delete(run.id);
      release();
      if (this.active.size === 0) this.onIdle?.();
    }
  };

  /** True while the run is working in this process. */
  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  /** Stops a running run; false when it is not running here. */
  cancel(runId: string): boolean {
    const active = this.active.get(runId);
    if (!active) return false;
    this.stop(active, 'cancel', new DelegateError('ABORTED', `Run ${runId} was cancelled.`));
    return true;
  }

  /** Stops a running sub-agent of a running run; false when it is not running. */
  cancelAgent(runId: string, agentId: string): boolean {
    return this.active.get(runId)?.runner?.stopAgent(agentId) ?? false;
  }

  /** Moves a running foreground sub-agent to the background; false when it cannot be. */
  backgroundAgent(runId: string, agentId: string): boolean {
    return this.active.get(runId)?.runner?.backgroundAgent(agentId) ?? false;
  }

  /** Forgets an idle session (a later turn restores it from its transcripts). */
  dropIdle(runId: string): void {
    this.idle.delete(runId);
  }

  private stop(active: ActiveRun, reason: 'cancel' | 'shutdown', cause: unknown): void {
    active.stopping ??= reason;
    active.runner?.abort(cause);
  }

  private async runTurn(options: {
    run: RunRecord;
    input: RunInput;
    active: ActiveRun;
  }): Promise<TurnEnd> {
    const { run, input, active } = options;
    try {
      const prepared = await prepareSession({ run, defaults: this.defaults });
      const runner = await this.acquireRunner({ run, input, options: prepared.options });
      active.runner = runner;
      const tree = new AgentTree({
        runId: run.id,
        agents: await this.store.listAgents(run.id),
        facts: {
          colorOf: (agentType) => runner.colorOf(agentType),
          transcriptPathOf: (agentId) => runner.agentTranscriptPath(agentId),
        },
      });
      active.tree = tree;
      const off = runner.onEvent((event) => {
        this.record(run.id, active, tree.apply(event));
        // A task starts or ends with these: keep the stored task list current.
        if (event.kind === 'agent' && TASK_EVENTS.has(event.event.type))
          this.queueTaskSync(run, active);
      });
      try {
        this.record(
          run.id,
          active,
          tree.startMain({
            agentType: prepared.mainAgentType,
            description: run.prompt.split('\n')[0]!.slice(0, 200),
            model: runner.mainModel,
            color: prepared.mainColor,
            transcriptPath: runner.mainTranscriptPath(),
          }),
        );
        // A stop requested while the session was opening takes effect now.
        if (active.stopping) runner.abort(new DelegateError('ABORTED', 'Stopped before it began.'));
        if (input.kind === 'resume') await this.resumeAgents(runner, tree);
        const turn = await runner.runTurn(inputText(run, input));
        return this.endOf(active, turn);
      } finally {
        off();
      }
    } catch (error) {
      if (active.stopping || isAbortError(error))
        return this.endOf(active, { outcome: 'aborted', text: '' });
      this.logger.warn({ runId: run.id, err: errorMessage(error) }, 'run turn failed');
      return {
        status: 'failed',
        result: null,
        error: {
          code: DelegateError.isInstance(error) ? error.code : 'INTERNAL',
          message: this.redact(errorMessage(error)),
        },
      };
    }
  }

  private endOf(
    active: ActiveRun,
    turn: { outcome: 'completed' | 'aborted'; text: string },
  ): TurnEnd {
    const result = turn.text ? this.redact(turn.text) : null;
    if (active.stopping === 'shutdown') {
      return {
        status: 'interrupted',
        result,
        error: {
          code: 'INTERRUPTED',
          message:
            'The server shut down before this turn finished. POST /v1/runs/{id}/resume continues it from its transcripts.',
        },
      };
    }
    if (turn.outcome === 'aborted' || active.stopping === 'cancel') {
      return {
        status: 'cancelled',
        result,
        error: { code: 'ABORTED', message: 'The run was cancelled.' },
      };
    }
    return { status: 'completed', result, error: null };
  }

  private async acquireRunner(options: {
    run: RunRecord;
    input: RunInput;
    options: SessionRunnerOptions;
  }): Promise<SessionRunner> {
    const cached = this.idle.get(options.run.id);
    this.idle.delete(options.run.id);
    if (cached && !cached.aborted && options.input.kind === 'message') return cached;
    return SessionRunner.open({ ...options.options, restore: options.input.kind !== 'start' });
  }

  private async resumeAgents(runner: SessionRunner, tree: AgentTree): Promise<void> {
    for (const agent of tree.list()) {
      if (agent.agentId === MAIN_AGENT_ID || agent.status !== 'interrupted') continue;
      try {
        await runner.resumeAgent(agent.agentId);
      } catch (error) {
        this.logger.warn(
          { agentId: agent.agentId, err: errorMessage(error) },
          'could not resume an interrupted agent',
        );
      }
    }
  }

  /** Stores changed agents (in order) and appends the change's events to the log. */
  private record(runId: string, active: ActiveRun, change: TreeChange): void {
    for (const data of change.events) void this.hub.publish(runId, data as RunEventData);
    if (change.agents.length === 0) return;
    const agents = change.agents.map((agent) => this.redact(agent));
    active.writes = active.writes
      .then(async () => {
        for (const agent of agents) await this.store.upsertAgent(agent);
      })
      .catch((error: unknown) =>
        this.logger.error({ runId, err: errorMessage(error) }, 'storing the agent tree failed'),
      );
  }

  private queueTaskSync(run: RunRecord, active: ActiveRun): void {
    active.writes = active.writes
      .then(() => this.syncTasks(run, active.runner))
      .catch((error: unknown) =>
        this.logger.error({ runId: run.id, err: errorMessage(error) }, 'storing tasks failed'),
      );
  }

  private async syncTasks(run: RunRecord, runner: SessionRunner | undefined): Promise<void> {
    for (const task of runner?.tasks() ?? []) {
      await this.store.upsertTask({
        runId: run.id,
        taskId: task.taskId,
        agentId: task.agentId,
        type: task.type,
        description: this.redact(task.description),
        status: task.status,
        backgrounded: task.backgrounded,
        startedAt: new Date(task.startTime).toISOString(),
        endedAt: task.endTime === null ? null : new Date(task.endTime).toISOString(),
      });
    }
  }

  private async finishTurn(options: {
    run: RunRecord;
    active: ActiveRun;
    end: TurnEnd;
  }): Promise<void> {
    const { run, active, end } = options;
    // Run and agent statuses share their names.
    const agentStatus: AgentStatus = end.status;
    if (active.tree) {
      this.record(
        run.id,
        active,
        active.tree.finish({
          status: agentStatus,
          mainStatus: agentStatus,
          ...(end.error ? { error: end.error.message } : {}),
        }),
      );
    }
    await active.writes;
    await this.syncTasks(run, active.runner).catch((error: unknown) =>
      this.logger.error({ runId: run.id, err: errorMessage(error) }, 'storing tasks failed'),
    );
    await this.store.transitionRun({
      runId: run.id,
      from: ['running'],
      patch: { status: end.status, result: end.result, error: end.error, endedAt: now() },
    });
    // The status event is the last of the turn: a follower ends after it.
    await this.hub.publish(run.id, {
      type: 'run.status',
      status: end.status,
      ...(end.result !== null ? { result: end.result } : {}),
      ...(end.error ? { error: end.error } : {}),
    });
    this.keepIdle(run.id, end.status === 'completed' ? active.runner : undefined);
    this.logger.info({ runId: run.id, status: end.status }, 'run turn ended');
  }

  private keepIdle(runId: string, runner: SessionRunner | undefined): void {
    if (!runner || runner.aborted || this.idleLimit === 0) return;
    this.idle.set(runId, runner);
    while (this.idle.size > this.idleLimit) {
      const oldest = this.idle.keys().next().value;
      if (oldest === undefined) break;
      this.idle.delete(oldest);
    }
  }
}
