import { join } from 'node:path';
import { DelegateError, errorMessage, isAbortError } from '@delegate/core';
import type { Logger } from 'pino';
import type { RunEventHub } from '../events/run-event-hub.js';
import type { RunEventData } from '../http/schemas.js';
import type { RunJob } from '../queue/run-queue.js';
import type { AgentStatus, RunError, RunInput, RunRecord, RunStore } from '../store/run-store.js';
import { AgentTree, MAIN_AGENT_ID, type TreeChange } from './agent-tree.js';
import {
  type PreparedSession,
  type SessionDefaults,
  explainSessionError,
  prepareSession,
} from './prepare-session.js';
import { type RunnerTask, SessionRunner, type SessionRunnerOptions } from './session-runner.js';
import { failBrokenRun } from './fail-broken-run.js';
import { retryStoreWrite } from './retry-store-write.js';
import { takeOverRun } from './take-over-run.js';
import { TranscriptSync } from './transcript-sync.js';

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
  /** Copies the transcripts into the store (the run's checkpoints). */
  transcripts: TranscriptSync;
  /** True once another worker holds the run: nothing more of it is recorded from here. */
  lost: boolean;
  /** Changes held back while it is checked that the run is still this worker's. */
  held: TreeChange[] | undefined;
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

const HANDOFF_NOTE =
  'The worker running this session shut down while you were working, and another worker took over. Your last finished turn is kept; read-only tool calls that were in flight ran again, and the others did not complete (their results say so). Continue the task, then give your report.';

/** True when a sub-agent of the tree is recorded interrupted (a crash or a shutdown stopped it). */
function hasInterruptedAgents(tree: AgentTree): boolean {
  return tree
    .list()
    .some((agent) => agent.agentId !== MAIN_AGENT_ID && agent.status === 'interrupted');
}

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
 * What the main agent is sent: the turn's input, except after a takeover whose restored
 * conversation already holds the cut-off turn's input (then the resume note), and except for a
 * run whose conversation never got its prompt (then the prompt, and a message after it).
 */
function turnText(run: RunRecord, input: RunInput, runner: SessionRunner): string {
  if (
    input.kind === 'resume' &&
    input.original !== undefined &&
    !runner.holdsUserText(input.original)
  )
    return input.original;
  // The run never started a turn (cancelled while queued): its task comes first, or the model
  // would be asked to go on with, or answer a message about, work it was never given.
  if (input.kind !== 'start' && !runner.holdsUserText(run.prompt))
    return input.kind === 'message' ? `${run.prompt}\n\n${input.text}` : run.prompt;
  return inputText(run, input);
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
  private readonly shared: boolean;
  private readonly maxFailovers: number;
  private readonly lockDurationMs: number | undefined;
  private readonly active = new Map<string, ActiveRun>();
  /** Sessions of finished turns, oldest first, for quick continuation. */
  private readonly idle = new Map<string, SessionRunner>();
  private readonly onIdle: (() => void) | undefined;
  private readonly onBusy: (() => void) | undefined;

  constructor(options: {
    store: RunStore;
    hub: RunEventHub;
    logger: Logger;
    defaults: SessionDefaults;
    redact: <T>(value: T) => T;
    idleSessions: number;
    /**
     * True when other workers share the queue and the store: a turn stopped by a shutdown is
     * handed back to the queue, and no idle session is kept (the next turn may have run elsewhere).
     */
    shared?: boolean;
    /** Times a run may be taken over from a dead worker before it is failed. */
    maxFailovers?: number;
    /**
     * A shared queue's lock time (`--failover-after-ms`): a worker that did not run for half of
     * it (paused, starved) checks that its runs are still its own before recording more.
     */
    lockDurationMs?: number;
    /** Called each time the last working run's turn ends. */
    onIdle?: () => void;
    /** Called when a run starts working while none was. */
    onBusy?: () => void;
  }) {
    this.store = options.store;
    this.hub = options.hub;
    this.logger = options.logger;
    this.defaults = options.defaults;
    this.redact = options.redact;
    this.shared = options.shared ?? false;
    this.maxFailovers = options.maxFailovers ?? 3;
    this.lockDurationMs = options.lockDurationMs;
    this.idleLimit = this.shared ? 0 : options.idleSessions;
    this.onIdle = options.onIdle;
    this.onBusy = options.onBusy;
  }

  /**
   * The queue's handler: runs the turn of `job.runId` (and a further one queued while the
   * turn ended), or takes over a run whose worker died.
   */
  handle = async (job: RunJob, signal: AbortSignal): Promise<void | 'handed-back'> => {
    try {
      for (;;) {
        const outcome = await this.handleOnce(job, signal);
        if (outcome !== 'again' || signal.aborted)
          return outcome === 'handed-back' ? outcome : undefined;
      }
    } catch (error) {
      // Nothing else would end the run: it would show as running for good.
      const recorded = await this.failBroken(job.runId, error, signal);
      // Shut down before the store took the failure: on a shared queue the job goes back, and
      // the worker that takes it takes the run over (the store still says running).
      if (!recorded && this.shared) return 'handed-back';
      throw error;
    }
  };

  /**
   * Fails a run whose turn broke off with an error it could not record (see failBrokenRun),
   * trying again while the store does not answer, until `signal` aborts (the shutdown's grace
   * time ran out). False when the failure could not be stored by then.
   */
  private async failBroken(runId: string, error: unknown, signal: AbortSignal): Promise<boolean> {
    const reason = this.redact(errorMessage(error));
    try {
      const failed = await retryStoreWrite({
        write: () => failBrokenRun({ store: this.store, hub: this.hub, runId, reason }),
        signal,
        onFailure: (failure, attempt) => {
          if (attempt === 1)
            this.logger.error(
              { runId, err: this.redact(errorMessage(failure)) },
              'could not record the failure of a run whose turn broke off; trying again until the store answers',
            );
        },
      });
      if (failed)
        this.logger.warn({ runId }, 'run failed after an error its turn could not record');
      return true;
    } catch (failure) {
      this.logger.error(
        { runId, err: this.redact(errorMessage(failure)) },
        this.shared
          ? 'the worker shut down before the failure of a run whose turn broke off could be stored; its job goes back to the queue, and the worker that takes it takes the run over'
          : 'the server shut down before the failure of a run whose turn broke off could be stored; it is marked interrupted when the server starts again',
      );
      return false;
    }
  }

  private async handleOnce(
    job: RunJob,
    signal: AbortSignal,
  ): Promise<void | 'handed-back' | 'again'> {
    const current = await this.store.getRun(job.runId);
    if (!current) return;
    let run: RunRecord | undefined;
    let input: RunInput;
    if (current.status === 'running' && ((job.attempt ?? 1) > 1 || job.takeover)) {
      // The worker that held this job stopped answering; this one takes the run over.
      const takeover = await takeOverRun({
        store: this.store,
        hub: this.hub,
        run: current,
        failovers: Math.max(job.failovers ?? 0, (job.attempt ?? 1) - 1, job.takeover ? 1 : 0),
        maxFailovers: this.maxFailovers,
      });
      if (!takeover) return;
      ({ run, input } = takeover);
    } else {
      if (current.status !== 'queued') return;
      input = current.pending ?? { kind: 'start' };
      run = await this.store.transitionRun({
        runId: job.runId,
        from: ['queued'],
        patch: { status: 'running', pending: null, startedAt: now(), endedAt: null, error: null },
      });
      // Cancelled while it waited.
      if (!run) return;
    }
    const ended = await this.work({ run, input, signal, job });
    if (ended === 'handed-back') return ended;
    if (ended === 'lost') return;
    // A message sent while this turn was ending is queued under the same job: run it here.
    return (await this.store.getRun(run.id))?.status === 'queued' ? 'again' : undefined;
  }

  private async work(options: {
    run: RunRecord;
    input: RunInput;
    signal: AbortSignal;
    job: RunJob;
  }): Promise<TurnEnd['status'] | 'handed-back' | 'lost'> {
    const { run, input, signal, job } = options;
    const release = this.hub.retain(run.id);
    const active: ActiveRun = {
      runner: undefined,
      tree: undefined,
      stopping: undefined,
      writes: Promise.resolve(),
      transcripts: new TranscriptSync({
        store: this.store,
        runId: run.id,
        directory: join(this.defaults.dataDir, 'transcripts'),
        sessionId: run.sessionId,
      }),
      lost: false,
      held: undefined,
    };
    this.active.set(run.id, active);
    if (this.active.size === 1) this.onBusy?.();
    const onShutdown = (): void => this.stop(active, 'shutdown', signal.reason);
    signal.addEventListener('abort', onShutdown, { once: true });
    // Checkpoints between the events too, so a long tool call loses nothing already answered.
    const checkpoint = setInterval(() => this.queueTranscriptSync(run.id, active), 250);
    const unwatch = this.watchOwnership({ runId: run.id, job, active });
    try {
      void this.hub.publish(run.id, { type: 'run.status', status: 'running' });
      // A takeover continues the turn whose input is already logged (run.failover says why).
      if (!(input.kind === 'resume' && input.original !== undefined))
        void this.hub.publish(run.id, {
          type: 'run.input',
          kind: input.kind,
          text: this.redact(inputText(run, input)),
        });
      const end = await this.runTurn({ run, input, active });
      clearInterval(checkpoint);
      if (!(await this.stillHolds({ runId: run.id, job, active })))
        return await this.letGo(run.id, active);
      if (end.status === 'interrupted' && active.stopping === 'shutdown' && this.shared)
        return await this.handBack({ run, active, input });
      if (!(await this.finishTurn({ run, active, end, signal })))
        return await this.letGo(run.id, active);
      return end.status;
    } catch (error) {
      // Another worker holds the run now: the failure is not this worker's to record.
      if (active.lost) return await this.letGo(run.id, active);
      // The turn broke off before its session was kept or closed: no later turn uses it.
      if (active.runner && this.idle.get(run.id) !== active.runner)
        void this.retire(run.id, active.runner);
      throw error;
    } finally {
      clearInterval(checkpoint);
      unwatch();
      signal.removeEventListener('abort', onShutdown);
      this.active.delete(run.id);
      release();
      if (this.active.size === 0) this.onIdle?.();
    }
  }

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
    const runner = this.idle.get(runId);
    this.idle.delete(runId);
    if (runner) void this.retire(runId, runner);
  }

  /**
   * Closes every idle session, at shutdown: their background shells stop and their logs are
   * deleted (a later turn restores the conversation from its transcripts).
   */
  async closeIdle(): Promise<void> {
    const idle = [...this.idle.entries()];
    this.idle.clear();
    await Promise.all(idle.map(([runId, runner]) => this.retire(runId, runner)));
  }

  /**
   * Closes a session no turn will use again: its background shells stop and their logs are
   * deleted. Resolves once the shells it stopped are stored as ended (they would otherwise
   * show as running for good); never rejects.
   */
  private retire(runId: string, runner: SessionRunner): Promise<void> {
    return runner
      .close()
      .then(() =>
        this.storeTasks(
          runId,
          runner.tasks().filter((task) => task.type === 'local_bash'),
        ),
      )
      .catch((error: unknown) =>
        this.logger.error({ runId, err: errorMessage(error) }, 'closing the session failed'),
      );
  }

  private stop(active: ActiveRun, reason: 'cancel' | 'shutdown', cause: unknown): void {
    active.stopping ??= reason;
    if (active.stopping === 'shutdown') active.tree?.stopForShutdown();
    active.runner?.abort(cause);
  }

  private async runTurn(options: {
    run: RunRecord;
    input: RunInput;
    active: ActiveRun;
  }): Promise<TurnEnd> {
    const { run, input, active } = options;
    let prepared: PreparedSession | undefined;
    try {
      prepared = await prepareSession({ run, defaults: this.defaults });
      // The store holds the last finished turn of every agent, whichever worker ran it.
      if (input.kind !== 'start') await active.transcripts.restore();
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
      if (active.stopping === 'shutdown') tree.stopForShutdown();
      const off = runner.onEvent((event) => {
        this.record(run.id, active, tree.apply(event));
        this.queueTranscriptSync(run.id, active);
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
        // What the server left out of the workspace's agent files, told once, when the run starts.
        if (input.kind === 'start')
          for (const note of prepared.ignoredFields)
            this.record(
              run.id,
              active,
              tree.apply({
                kind: 'agent',
                event: {
                  type: 'agent.warning',
                  agentId: MAIN_AGENT_ID,
                  timestamp: new Date().toISOString(),
                  code: 'AGENT_FIELD_IGNORED',
                  message: note,
                },
              }),
            );
        // A stop requested while the session was opening takes effect now.
        if (active.stopping) runner.abort(new DelegateError('ABORTED', 'Stopped before it began.'));
        // A takeover or a handoff (the run's worker stopped): in-flight read-only calls of
        // every agent of the tree run again; the other calls are reported interrupted.
        const afterTakeover = input.kind === 'resume' && input.original !== undefined;
        if (afterTakeover) await this.settleInFlightCalls(run.id, runner);
        // A message to a run a crash or a shutdown interrupted takes its agents up too: once
        // the turn completes, the run could not be resumed any more and they would stay
        // interrupted for good.
        if (input.kind === 'resume' || (input.kind === 'message' && hasInterruptedAgents(tree)))
          await this.resumeAgents(runner, tree, {
            afterTakeover,
            onChange: (change) => this.record(run.id, active, change),
          });
        const turn = await runner.runTurn(turnText(run, input, runner));
        return this.endOf(active, turn);
      } finally {
        off();
      }
    } catch (caught) {
      if (active.stopping || isAbortError(caught))
        return this.endOf(active, { outcome: 'aborted', text: '' });
      const error = explainSessionError(caught, prepared);
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
    if (cached) void this.retire(options.run.id, cached);
    return SessionRunner.open({ ...options.options, restore: options.input.kind !== 'start' });
  }

  private async settleInFlightCalls(runId: string, runner: SessionRunner): Promise<void> {
    try {
      const settled = await runner.settleInFlightCalls();
      if (settled.rerun.length + settled.interrupted.length > 0)
        this.logger.info({ runId, ...settled }, 'settled the tool calls that were in flight');
    } catch (error) {
      // The runtime still pairs every call with a result before the next request.
      this.logger.warn(
        { runId, err: errorMessage(error) },
        'could not settle in-flight tool calls',
      );
    }
  }

  private async resumeAgents(
    runner: SessionRunner,
    tree: AgentTree,
    options: { afterTakeover: boolean; onChange: (change: TreeChange) => void },
  ): Promise<void> {
    for (const agent of tree.list()) {
      // Stopped before they were resumed (a cancel as the turn opened): they stay interrupted,
      // for a later resume.
      if (runner.aborted) return;
      if (agent.agentId === MAIN_AGENT_ID || agent.status !== 'interrupted') continue;
      // It finished, and its notification is in the main transcript, before its worker
      // stopped (the store had not caught up): resumed, it would report a second time.
      const ended = agent.taskId ? runner.notifiedTaskStatus(agent.taskId) : undefined;
      if (ended) {
        options.onChange(tree.settleFinished(agent.agentId, ended));
        continue;
      }
      try {
        await runner.resumeAgent(agent.agentId, { afterTakeover: options.afterTakeover });
      } catch (error) {
        const reason = errorMessage(error);
        this.logger.warn(
          { agentId: agent.agentId, err: reason },
          'could not resume an interrupted agent',
        );
        options.onChange(
          tree.settleUnresumable(
            agent.agentId,
            `The agent was interrupted and could not be resumed: ${reason}`,
          ),
        );
        // A background agent's parent waits for its notification: it gets a failed one.
        if (agent.taskId && agent.backgrounded)
          runner.reportUnresumable({
            taskId: agent.taskId,
            agentId: agent.agentId,
            description: agent.description,
            reason,
          });
      }
    }
  }

  /** Stores changed agents (in order) and appends the change's events to the log. */
  private record(runId: string, active: ActiveRun, change: TreeChange): void {
    if (active.lost) return;
    if (active.held) {
      active.held.push(change);
      return;
    }
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

  private queueTranscriptSync(runId: string, active: ActiveRun): void {
    // The checkpoints are the holder's now; a stale copy must not replace them.
    if (active.lost || active.held) return;
    active.transcripts
      .sync()
      .catch((error: unknown) =>
        this.logger.error({ runId, err: errorMessage(error) }, 'storing transcripts failed'),
      );
  }

  /** Stores the turn's last transcript lines; they are the checkpoint the next turn starts from. */
  private async checkpoint(runId: string, active: ActiveRun): Promise<void> {
    await active.runner?.flush().catch(() => undefined);
    await active.transcripts
      .sync()
      .catch((error: unknown) =>
        this.logger.error({ runId, err: errorMessage(error) }, 'storing transcripts failed'),
      );
  }

  /**
   * A shared queue's worker shut down mid-turn: the agents are recorded as interrupted, the
   * transcripts stored, and the run queued again to resume on another worker.
   */
  private async handBack(options: {
    run: RunRecord;
    active: ActiveRun;
    input: RunInput;
  }): Promise<'handed-back'> {
    const { run, active, input } = options;
    // The next worker sends this again if the conversation did not get to store it.
    const original =
      input.kind === 'resume' && input.original !== undefined
        ? input.original
        : this.redact(inputText(run, input));
    // Sub-agents the shutdown stopped are already `interrupted`; they go on elsewhere too.
    const working = (active.tree?.list() ?? []).filter(
      (agent) => agent.status === 'running' || agent.status === 'interrupted',
    );
    if (active.tree)
      this.record(
        run.id,
        active,
        active.tree.finish({ status: 'interrupted', mainStatus: 'interrupted' }),
      );
    await active.writes;
    await this.checkpoint(run.id, active);
    await this.syncTasks(run, active.runner).catch(() => undefined);
    // The next worker starts a session of its own.
    if (active.runner) void this.retire(run.id, active.runner);
    for (const agent of working)
      void this.hub.publish(run.id, {
        type: 'agent.retried',
        agentId: agent.agentId,
        reason: 'handoff',
      });
    await this.store.transitionRun({
      runId: run.id,
      from: ['running'],
      patch: {
        status: 'queued',
        pending: { kind: 'resume', text: HANDOFF_NOTE, original },
        endedAt: now(),
      },
    });
    await this.hub.publish(run.id, { type: 'run.status', status: 'queued' });
    await this.hub.flush(run.id);
    this.logger.info({ runId: run.id }, 'run handed back to the queue');
    return 'handed-back';
  }

  private queueTaskSync(run: RunRecord, active: ActiveRun): void {
    if (active.lost) return;
    active.writes = active.writes
      .then(() => this.syncTasks(run, active.runner))
      .catch((error: unknown) =>
        this.logger.error({ runId: run.id, err: errorMessage(error) }, 'storing tasks failed'),
      );
  }

  private async syncTasks(run: RunRecord, runner: SessionRunner | undefined): Promise<void> {
    await this.storeTasks(run.id, runner?.tasks() ?? []);
  }

  private async storeTasks(runId: string, tasks: readonly RunnerTask[]): Promise<void> {
    for (const task of tasks) {
      await this.store.upsertTask({
        runId,
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
    signal: AbortSignal;
  }): Promise<boolean> {
    const { run, active, end, signal } = options;
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
    await this.checkpoint(run.id, active);
    await this.syncTasks(run, active.runner).catch((error: unknown) =>
      this.logger.error({ runId: run.id, err: errorMessage(error) }, 'storing tasks failed'),
    );
    // The store may be down as the turn ends: the end is stored once it answers again.
    const stored = await this.untilStored(run.id, signal, () =>
      this.store.transitionRun({
        runId: run.id,
        from: ['running'],
        patch: { status: end.status, result: end.result, error: end.error, endedAt: now() },
      }),
    );
    // Not running any more: another worker took the run over and ended it meanwhile.
    if (!stored) return false;
    // The status event is the last of the turn: a follower ends after it.
    await this.untilStored(run.id, signal, async () => {
      const stored = await this.hub.publish(run.id, {
        type: 'run.status',
        status: end.status,
        ...(end.result !== null ? { result: end.result } : {}),
        ...(end.error ? { error: end.error } : {}),
      });
      if (!stored) throw new Error('the store refused the run.status event');
    });
    if (active.runner) this.keepIdle(run.id, active.runner, end.status === 'completed');
    this.logger.info({ runId: run.id, status: end.status }, 'run turn ended');
    return true;
  }

  /**
   * On a shared queue, watches that the run stays this worker's: when renewing its lock fails,
   * or when this process did not run for half the lock time (paused, starved), what the run
   * does is held back until it is checked; a run another worker holds now is let go.
   */
  private watchOwnership(options: { runId: string; job: RunJob; active: ActiveRun }): () => void {
    const { runId, job, active } = options;
    const lockDurationMs = this.lockDurationMs;
    if (!job.lockHolder || lockDurationMs === undefined) return () => undefined;
    const check = (): void => void this.stillHolds(options);
    job.lockLost?.addEventListener('abort', check, { once: true });
    let last = Date.now();
    // Timers run before the I/O that was waiting while the process stood still, so the check
    // begins before anything that arrived meanwhile is recorded.
    const timer = setInterval(() => {
      const gap = Date.now() - last;
      last = Date.now();
      if (gap > lockDurationMs / 2 && !active.lost) {
        this.logger.warn(
          { runId, pausedMs: gap },
          'this worker stood still; checking that it still holds the run',
        );
        check();
      }
    }, 250);
    return () => {
      clearInterval(timer);
      job.lockLost?.removeEventListener('abort', check);
    };
  }

  /**
   * True while the run is this worker's: its job's lock is this worker's, or nobody's while
   * the store still says running (the queue lost its data). Changes held back meanwhile are
   * recorded once it is; a run that is not is stopped here (see letGo).
   */
  private async stillHolds(options: {
    runId: string;
    job: RunJob;
    active: ActiveRun;
  }): Promise<boolean> {
    const { runId, job, active } = options;
    if (active.lost) return false;
    if (!job.lockHolder) return true;
    active.held ??= [];
    let holds = true;
    try {
      const holder = await job.lockHolder();
      holds =
        holder === 'this' ||
        (holder === 'none' && (await this.store.getRun(runId))?.status === 'running');
    } catch {
      // Redis or the store does not answer: go on; the end's compare-and-set still guards it.
    }
    const held = active.held ?? [];
    active.held = undefined;
    if (!holds) {
      active.lost = true;
      this.hub.discard(runId);
      active.runner?.abort(
        new DelegateError('ABORTED', `Run ${runId} is held by another worker now.`),
      );
      return false;
    }
    for (const change of held) this.record(runId, active, change);
    return true;
  }

  /** Lets go of a run another worker holds now: its session closes, and nothing more is stored. */
  private async letGo(runId: string, active: ActiveRun): Promise<'lost'> {
    active.lost = true;
    // Held for a store that did not answer: another worker writes the run's log now.
    this.hub.discard(runId);
    this.logger.warn(
      { runId },
      'lost the run to another worker (this one stood still past its lock time, --failover-after-ms); stopped it here without recording anything more',
    );
    await active.runner?.close().catch(() => undefined);
    return 'lost';
  }

  /** Runs a store write of the turn's end, again while the store does not answer (see retryStoreWrite). */
  private untilStored<T>(runId: string, signal: AbortSignal, write: () => Promise<T>): Promise<T> {
    return retryStoreWrite({
      write,
      signal,
      onFailure: (error, attempt) => {
        if (attempt === 1)
          this.logger.error(
            { runId, err: this.redact(errorMessage(error)) },
            'could not store the end of a turn; trying again until the store answers',
          );
      },
    });
  }

  /** Keeps a completed turn's session for the run's next message; any other is closed. */
  private keepIdle(runId: string, runner: SessionRunner, completed: boolean): void {
    if (!completed || runner.aborted || this.idleLimit === 0) {
      void this.retire(runId, runner);
      return;
    }
    this.idle.set(runId, runner);
    while (this.idle.size > this.idleLimit) {
      const oldest = this.idle.entries().next().value;
      if (oldest === undefined) break;
      this.idle.delete(oldest[0]);
      void this.retire(oldest[0], oldest[1]);
    }
  }
}
