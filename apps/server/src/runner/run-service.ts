import { randomBytes } from 'node:crypto';
import { isAbsolute, join, relative } from 'node:path';
import { readFile, realpath } from 'node:fs/promises';
import { DelegateError, errorMessage } from '@delegate/core';
import { reapOrphanedShells } from '@delegate/tools';
import type { Logger } from 'pino';
import type { RunEventHub } from '../events/run-event-hub.js';
import { ApiError, conflict, runNotFound } from '../http/api-error.js';
import type { CreateRunBody, RunStatus } from '../http/schemas.js';
import type { RunQueue } from '../queue/run-queue.js';
import type {
  AgentRecord,
  RunInput,
  RunPage,
  RunRecord,
  RunStore,
  TaskRecord,
} from '../store/run-store.js';
import { resolveWorkspace } from '../workspace/resolve-workspace.js';
import { MAIN_AGENT_ID } from './agent-tree.js';
import { checkMainAgentRuns, findMainAgent, loadWorkspaceAgents } from './prepare-session.js';
import { endRunningAgents, endRunningTasks } from './end-running-tasks.js';
import type { RunExecutor } from './run-executor.js';
import { LocalRunControl, type RunControl } from './run-control.js';

/** A run with its tree and tasks. */
export type RunDetails = { run: RunRecord; agents: AgentRecord[]; tasks: TaskRecord[] };

const INTERRUPTED_MESSAGE =
  'The server stopped while this run was working. POST /v1/runs/{id}/resume continues it from its transcripts.';

/** The 503 answer to a run creation whose queue refused the run (the run was withdrawn). */
function withdrawnRun(cause: unknown): ApiError {
  return new ApiError({
    status: 503,
    code: 'UNAVAILABLE',
    message: `${errorMessage(cause)} The run was not started and will not be: send the request again once the server is ready (GET /readyz).`,
    cause,
  });
}

/** The 503 answer when neither the queue took a new run nor the store let it be withdrawn. */
function runFateUnknown(runId: string, cause: unknown, storeError: unknown): ApiError {
  return new ApiError({
    status: 503,
    code: 'UNAVAILABLE',
    message: `${errorMessage(cause)} Run ${runId} could not be withdrawn either (${errorMessage(storeError)}), so it may still start once the queue and the store answer: look at GET /v1/runs/${runId} before sending the request again.`,
    cause,
  });
}

const TASK_INTERRUPTED_MESSAGE =
  'The server stopped while this task was running, and the task ended with it.';

/**
 * Kills the background shells a crashed server process of this machine left running (their
 * records name a host that is gone; see `reapOrphanedShells` of `@delegate/tools`). Returns
 * how many process groups it killed; a failure kills none and is not an error.
 */
async function reapShells(): Promise<number> {
  return (await reapOrphanedShells().catch(() => [])).length;
}

function now(): string {
  return new Date().toISOString();
}

/**
 * What the API does with runs: create, read, continue, resume, cancel, steer agents, find
 * transcripts, and recover after a restart. Work itself goes through the `RunQueue` to
 * the `RunExecutor`.
 */
export class RunService {
  private readonly store: RunStore;
  private readonly hub: RunEventHub;
  private readonly queue: RunQueue;
  private readonly executor: RunExecutor | undefined;
  private readonly control: RunControl;
  private readonly shared: boolean;
  private readonly logger: Logger;
  private readonly workspaceRoots: readonly string[];
  private readonly configuredWorkspaceRoots: readonly string[];
  private readonly transcriptDir: string;
  private readonly homeDir: string | undefined;
  private readonly redact: <T>(value: T) => T;
  private accepting = true;

  constructor(options: {
    store: RunStore;
    hub: RunEventHub;
    queue: RunQueue;
    /** This process's executor; absent on an API-only node. */
    executor: RunExecutor | undefined;
    /** Reaches the process working on a run (default: this one). */
    control?: RunControl;
    logger: Logger;
    /** The workspace roots, real paths. */
    workspaceRoots: readonly string[];
    /** The workspace roots as configured (symbolic links not followed); default: the real ones. */
    configuredWorkspaceRoots?: readonly string[];
    dataDir: string;
    homeDir?: string;
    redact: <T>(value: T) => T;
  }) {
    this.store = options.store;
    this.hub = options.hub;
    this.queue = options.queue;
    this.executor = options.executor;
    this.control = options.control ?? new LocalRunControl(options.executor);
    this.shared = options.queue.shared === true;
    this.logger = options.logger;
    this.workspaceRoots = options.workspaceRoots;
    this.configuredWorkspaceRoots = options.configuredWorkspaceRoots ?? [];
    this.transcriptDir = join(options.dataDir, 'transcripts');
    this.homeDir = options.homeDir;
    this.redact = options.redact;
  }

  /** Refuses new work from now on (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
  }

  /** Creates a run and queues its first turn. */
  async create(body: CreateRunBody): Promise<RunRecord> {
    this.assertAccepting();
    const workspace = await resolveWorkspace({
      requested: body.workspace,
      roots: this.workspaceRoots,
      configuredRoots: this.configuredWorkspaceRoots,
    });
    if (body.agent !== undefined) {
      // Only whether the agent exists and can run here is checked: trust changes fields, never
      // the list or an agent's requirements.
      const definitions = await loadWorkspaceAgents({
        workspace,
        ...(this.homeDir ? { homeDir: this.homeDir } : {}),
      });
      checkMainAgentRuns(findMainAgent(definitions, body.agent));
    }
    const { prompt, workspace: _requested, ...options } = body;
    const id = `run_${randomBytes(12).toString('hex')}`;
    const run = await this.store.createRun({
      id,
      status: 'queued',
      prompt: this.redact(prompt),
      // As the prompt: no secret is stored, shown or sent (a model name, a rule holding one).
      options: this.redact(options),
      workspace,
      sessionId: id,
      transcriptDir: this.transcriptDir,
      pending: { kind: 'start' },
      createdAt: now(),
    });
    try {
      await this.queueTurn(run);
    } catch (error) {
      let withdrawn: boolean;
      try {
        withdrawn = await this.withdraw(run.id, error);
      } catch (storeError) {
        throw runFateUnknown(run.id, error, storeError);
      }
      if (withdrawn) throw withdrawnRun(error);
    }
    return run;
  }

  /**
   * Ends a new run its queue refused (Redis did not answer, the server is stopping) as failed,
   * so that the client, told the request failed, can send it again without a second run
   * starting later. Returns false when a worker took it meanwhile (the queue answered late):
   * then the run goes on and the request succeeds.
   */
  private async withdraw(runId: string, cause: unknown): Promise<boolean> {
    // The queue is not asked to drop the job: it may not answer. A job it adds late finds
    // the run ended and is skipped.
    const failed = await this.store.transitionRun({
      runId,
      from: ['queued'],
      patch: {
        status: 'failed',
        pending: null,
        endedAt: now(),
        error: { code: 'UNAVAILABLE', message: `Not started: ${errorMessage(cause)}` },
      },
    });
    if (!failed) return false;
    await this.hub
      .publish(runId, { type: 'run.status', status: 'failed', error: failed.error! })
      .catch(() => undefined);
    return true;
  }

  /** A run with its tree and tasks, or a 404. */
  async details(runId: string): Promise<RunDetails> {
    const run = await this.require(runId);
    const [agents, tasks] = await Promise.all([
      this.store.listAgents(runId),
      this.store.listTasks(runId),
    ]);
    return { run: this.shown(run), agents, tasks };
  }

  /** A page of runs. */
  async list(options: { status?: RunStatus; limit: number; cursor?: string }): Promise<RunPage> {
    try {
      const page = await this.store.listRuns(options);
      return { ...page, runs: page.runs.map((run) => this.shown(run)) };
    } catch (error) {
      if (DelegateError.hasCode(error, 'INVALID_ARGUMENT'))
        throw new ApiError({
          status: 400,
          code: 'INVALID_ARGUMENT',
          message: error.message,
          field: 'cursor',
        });
      throw error;
    }
  }

  /** A run as the API shows it: its options redacted (a run stored by an earlier version holds them as sent). */
  private shown(run: RunRecord): RunRecord {
    return { ...run, options: this.redact(run.options) };
  }

  /** A run, or a 404. */
  async require(runId: string): Promise<RunRecord> {
    const run = await this.store.getRun(runId);
    if (!run) throw runNotFound(runId);
    return run;
  }

  /** Queues another turn with a user message; the run must not be queued or running. */
  async sendMessage(runId: string, text: string): Promise<RunRecord> {
    return this.requeue({
      runId,
      from: ['completed', 'failed', 'cancelled', 'interrupted'],
      input: { kind: 'message', text: this.redact(text) },
      refusal: (run) =>
        `Run ${runId} is ${run.status}; send a message once its turn has ended, or cancel it first.`,
    });
  }

  /** Queues a turn that continues an interrupted (or failed, or cancelled) run from its transcripts. */
  async resume(runId: string, text: string | undefined): Promise<RunRecord> {
    return this.requeue({
      runId,
      from: ['interrupted', 'failed', 'cancelled'],
      input: { kind: 'resume', ...(text === undefined ? {} : { text: this.redact(text) }) },
      refusal: (run) =>
        run.status === 'completed'
          ? `Run ${runId} completed; there is nothing to resume. Send it a message with POST /v1/runs/${runId}/messages instead.`
          : `Run ${runId} is ${run.status}; only an interrupted, failed or cancelled run can be resumed.`,
    });
  }

  /** Cancels a queued run at once, or asks a running one to stop. */
  async cancel(runId: string): Promise<'cancelled' | 'cancelling'> {
    const run = await this.require(runId);
    if (run.status === 'queued') {
      await this.queue.remove(runId);
      const cancelled = await this.store.transitionRun({
        runId,
        from: ['queued'],
        patch: {
          status: 'cancelled',
          pending: null,
          endedAt: now(),
          error: { code: 'ABORTED', message: 'The run was cancelled before it started.' },
        },
      });
      if (cancelled) {
        await this.hub.publish(runId, {
          type: 'run.status',
          status: 'cancelled',
          error: cancelled.error!,
        });
        return 'cancelled';
      }
    }
    if (await this.control.send({ op: 'cancel', runId })) return 'cancelling';
    const current = await this.require(runId);
    // Running, yet no process answered: its worker stopped (or cannot be reached) and the run
    // waits to be taken over by another one, which then answers.
    if (current.status === 'running' && this.shared)
      throw conflict(
        `Run ${runId} is running, but the worker holding it did not answer: it may have stopped, and another worker takes the run over once its lock runs out (--failover-after-ms), or at the next check for runs nobody holds (every --failover-after-ms, at least 10 s) when the queue lost its job. Try again then.`,
      );
    throw conflict(`Run ${runId} is ${current.status}; there is nothing to cancel.`);
  }

  /** Stops one agent of a running run (the main agent: the whole run). */
  async cancelAgent(runId: string, agentId: string): Promise<'cancelling'> {
    const agent = await this.requireRunningAgent(runId, agentId);
    if (agent.agentId === MAIN_AGENT_ID) {
      await this.cancel(runId);
      return 'cancelling';
    }
    if (!(await this.control.send({ op: 'cancelAgent', runId, agentId })))
      throw conflict(
        `Agent ${agentId} of run ${runId} is not running; there is nothing to cancel.`,
      );
    return 'cancelling';
  }

  /** Moves a running foreground sub-agent to the background. */
  async backgroundAgent(runId: string, agentId: string): Promise<'backgrounded'> {
    const agent = await this.requireRunningAgent(runId, agentId);
    if (
      agent.agentId === MAIN_AGENT_ID ||
      !(await this.control.send({ op: 'backgroundAgent', runId, agentId }))
    ) {
      throw conflict(
        `Agent ${agentId} of run ${runId} is not a running foreground sub-agent, so it cannot be moved to the background.`,
      );
    }
    return 'backgrounded';
  }

  /**
   * The transcript of the main agent or of a sub-agent as JSONL: this server's file when it
   * has one, else the copy in the store (written by whichever worker ran the agent).
   */
  async transcriptText(runId: string, agentId: string | undefined): Promise<string> {
    try {
      const path = await this.transcriptPath(runId, agentId);
      return await readFile(path, 'utf8');
    } catch (error) {
      // A file outside this server's folder is refused, unless it is another worker's (shared queue).
      if (error instanceof ApiError && error.publicCode === 'PATH_ESCAPE' && !this.shared)
        throw error;
      const stored = await this.storedTranscript(runId, agentId ?? MAIN_AGENT_ID);
      if (stored !== undefined) return stored;
      if (error instanceof ApiError) throw error;
      throw new ApiError({
        status: 404,
        code: 'NOT_FOUND',
        message: `The transcript of run ${runId} is not readable.`,
      });
    }
  }

  private async storedTranscript(runId: string, agentId: string): Promise<string | undefined> {
    const run = await this.store.getRun(runId);
    if (!run) return undefined;
    const agents = await this.store.listAgents(runId);
    if (!agents.some((agent) => agent.agentId === agentId)) return undefined;
    const file =
      agentId === MAIN_AGENT_ID
        ? `${run.sessionId}.jsonl`
        : `${run.sessionId}/agents/${agentId}.jsonl`;
    const chunks = (await this.store.listTranscriptChunks(runId)).filter(
      (chunk) => chunk.file === file,
    );
    return chunks.length === 0 ? undefined : chunks.map((chunk) => chunk.content).join('');
  }

  /** The transcript file of the main agent or of a sub-agent, checked to lie in the transcript folder. */
  async transcriptPath(runId: string, agentId: string | undefined): Promise<string> {
    await this.require(runId);
    const agents = await this.store.listAgents(runId);
    const wanted = agentId ?? MAIN_AGENT_ID;
    const agent = agents.find((item) => item.agentId === wanted);
    if (!agent) {
      throw new ApiError({
        status: 404,
        code: 'NOT_FOUND',
        field: 'agent',
        message: `agent: run ${runId} has no agent ${wanted}. Its agents: ${agents.map((item) => item.agentId).join(', ') || 'none yet'}.`,
      });
    }
    const missing = new ApiError({
      status: 404,
      code: 'NOT_FOUND',
      message: `No transcript has been written for agent ${wanted} of run ${runId} yet.`,
    });
    if (!agent.transcriptPath) throw missing;
    let real: string;
    try {
      real = await realpath(agent.transcriptPath);
    } catch {
      throw missing;
    }
    const root = await realpath(this.transcriptDir).catch(() => this.transcriptDir);
    const between = relative(root, real);
    if (between.startsWith('..') || isAbsolute(between)) {
      throw new ApiError({
        status: 400,
        code: 'PATH_ESCAPE',
        field: 'agent',
        message: `agent: the transcript of ${wanted} lies outside the server's transcript folder and is not served.`,
      });
    }
    return real;
  }

  /**
   * After a start: runs that were running are marked `interrupted` (their agents too) with
   * every event kept; runs still queued are queued again.
   */
  async recover(): Promise<{ interrupted: string[]; requeued: string[] }> {
    // With a shared queue, a running run belongs to a worker (or fails over to one).
    const interrupted = this.shared ? [] : await this.store.runIdsWithStatus(['running']);
    for (const runId of interrupted) await this.markInterrupted(runId);
    const staleTasks = this.shared ? 0 : await this.endStaleTasks();
    const reapedShells = await reapShells();
    const requeued = await this.requeueQueued();
    const orphaned = await this.takeOverOrphaned();
    if (interrupted.length + requeued.length + orphaned.length + staleTasks + reapedShells > 0)
      this.logger.info(
        {
          interrupted: interrupted.length,
          requeued: requeued.length,
          orphaned: orphaned.length,
          staleTasks,
          reapedShells,
        },
        'recovered runs',
      );
    return { interrupted, requeued };
  }

  /**
   * Queues every run the store says is queued (a queue keeps one job per run, so runs that
   * have one are left as they are). Run on start, and now and then on a shared queue's
   * workers: a message sent in the instant a worker finished the run's job is queued again.
   */
  async requeueQueued(): Promise<string[]> {
    const queued = await this.store.runIdsWithStatus(['queued']);
    for (const runId of queued) {
      const run = await this.store.getRun(runId);
      if (run?.status === 'queued') await this.queue.enqueue({ runId, fairnessKey: run.workspace });
    }
    return queued;
  }

  /**
   * On a shared queue: queues a takeover of every run the store says is running that has no
   * job in the queue and that no process says it works on (the queue lost its data, then the
   * run's worker stopped): nothing else would ever take it over. Run on start and with the
   * requeue sweep.
   */
  async takeOverOrphaned(): Promise<string[]> {
    if (!this.shared || !this.queue.hasJob) return [];
    const orphaned: string[] = [];
    for (const runId of await this.store.runIdsWithStatus(['running'])) {
      if (await this.queue.hasJob(runId)) continue;
      if (await this.control.send({ op: 'isActive', runId })) continue;
      // Asked again: a job may have come (and gone) while the workers were asked.
      const run = await this.store.getRun(runId);
      if (run?.status !== 'running' || (await this.queue.hasJob(runId))) continue;
      await this.queue.enqueue({ runId, fairnessKey: run.workspace, takeover: true });
      orphaned.push(runId);
    }
    if (orphaned.length > 0)
      this.logger.warn(
        { runIds: orphaned },
        'running runs had no queue job and no worker working on them; queued for a takeover',
      );
    return orphaned;
  }

  /**
   * Ends the tasks of ended or queued runs still stored as running: the background shells of
   * a session a crash killed (a run's session is kept between its turns). Only when this
   * process runs every turn: nothing else can be running them.
   */
  private async endStaleTasks(): Promise<number> {
    let ended = 0;
    for (const runId of await this.store.runIdsWithRunningTasks())
      ended += await endRunningTasks({
        store: this.store,
        hub: this.hub,
        runId,
        reason: TASK_INTERRUPTED_MESSAGE,
        announce: false,
      });
    return ended;
  }

  private async markInterrupted(runId: string): Promise<void> {
    await endRunningAgents({
      store: this.store,
      hub: this.hub,
      runId,
      status: 'interrupted',
      error: INTERRUPTED_MESSAGE,
    });
    await endRunningTasks({
      store: this.store,
      hub: this.hub,
      runId,
      reason: TASK_INTERRUPTED_MESSAGE,
    });
    const error = { code: 'INTERRUPTED', message: INTERRUPTED_MESSAGE };
    await this.store.transitionRun({
      runId,
      from: ['running'],
      patch: { status: 'interrupted', error, endedAt: now() },
    });
    await this.hub.publish(runId, { type: 'run.status', status: 'interrupted', error });
  }

  private async requireRunningAgent(runId: string, agentId: string): Promise<AgentRecord> {
    const run = await this.require(runId);
    const agent = (await this.store.listAgents(runId)).find((item) => item.agentId === agentId);
    if (!agent) {
      throw new ApiError({
        status: 404,
        code: 'NOT_FOUND',
        message: `Run ${runId} has no agent ${agentId}.`,
      });
    }
    if (
      run.status !== 'running' ||
      agent.status !== 'running' ||
      !(await this.control.send({ op: 'isActive', runId }))
    ) {
      throw conflict(
        `Agent ${agentId} of run ${runId} is ${agent.status} (the run is ${run.status}); only a running agent of a running run can be steered.`,
      );
    }
    return agent;
  }

  private async requeue(options: {
    runId: string;
    from: RunStatus[];
    input: RunInput;
    refusal: (run: RunRecord) => string;
  }): Promise<RunRecord> {
    this.assertAccepting();
    const existing = await this.require(options.runId);
    const run = await this.store.transitionRun({
      runId: options.runId,
      from: options.from,
      patch: { status: 'queued', pending: options.input, error: null },
    });
    if (!run) throw conflict(options.refusal((await this.store.getRun(options.runId)) ?? existing));
    // The process of an interrupted run is gone, so a task still `running` is stale: one the
    // run was interrupted with before restarts ended tasks (stored by an earlier build).
    // It is queued now: a failure here must not keep its turn from being queued.
    if (existing.status === 'interrupted')
      await endRunningTasks({
        store: this.store,
        hub: this.hub,
        runId: run.id,
        reason: TASK_INTERRUPTED_MESSAGE,
      }).catch((error: unknown) =>
        this.logger.warn(
          { runId: run.id, err: error },
          'could not end the tasks an interrupted run left running',
        ),
      );
    if (options.input.kind === 'resume') this.executor?.dropIdle(run.id);
    try {
      await this.queueTurn(run);
    } catch (error) {
      // The input is stored with the run queued: the requeue sweep hands it to a worker.
      throw new ApiError({
        status: 503,
        code: 'UNAVAILABLE',
        message: `${errorMessage(error)} The message is stored and run ${run.id} stays queued: it starts once a worker can take it, so do not send it again.`,
        cause: error,
      });
    }
    return run;
  }

  private async queueTurn(run: RunRecord): Promise<void> {
    await this.hub.publish(run.id, { type: 'run.status', status: 'queued' });
    await this.queue.enqueue({ runId: run.id, fairnessKey: run.workspace });
  }

  private assertAccepting(): void {
    if (!this.accepting) {
      throw new ApiError({
        status: 503,
        code: 'UNAVAILABLE',
        message: 'The server is shutting down and takes no new work. Try again when it is back.',
      });
    }
  }
}
