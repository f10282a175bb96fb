import { type AgentEvent, DelegateError } from '@delegate/core';
import { visibleAgents } from '@delegate/runtime/internal';
import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode, UsageError } from '../exit-codes.js';
import { InteractiveScreen } from '../interactive/interactive-screen.js';
import type { EditorAction } from '../interactive/prompt-editor.js';
import { FORCE_WINDOW_MS } from '../live/interrupt-keys.js';
import { SILENT_RENDERER } from '../output/run-renderer.js';
import { formatCacheTable } from '../output/run-summary.js';
import {
  type CliSession,
  type CliSessionOptions,
  createCliSession,
} from '../session/create-cli-session.js';
import { type StoppedAgents, noteStop, reportStoppedAgents } from '../session/stopped-agents.js';
import { resolveConfig } from '../settings/resolve-config.js';
import { type Colors, colorsFor } from '../terminal/colors.js';
import {
  formatDuration,
  formatTable,
  formatUsd,
  oneLine,
  printable,
  printableLines,
} from '../terminal/format.js';
import { AgentTree } from '../usage/agent-tree.js';
import { runTurn } from './execute-run.js';
import { sessionOptionsFor } from './run.js';
import { type RunFlags, configFlags } from './run-flags.js';

/** The slash commands of the interactive session, with what each does. */
export const SLASH_COMMANDS: ReadonlyArray<readonly [string, string]> = [
  ['/agents', 'the agent types the main agent can start'],
  ['/tasks', 'background agents and shell commands, with their status'],
  [
    '/bg <agent-id>',
    'move a running foreground sub-agent to the background (Ctrl-B: the latest one)',
  ],
  ['/stop <task-id|agent-id>', 'stop a task'],
  ['/cost', 'tokens and cost per agent so far'],
  ['/help', 'this list'],
  ['/exit', 'end the session (Ctrl-D does too)'],
];

/** A tool call as a person reads it: `Bash(npm test)`, `Write(src/a.ts)`, else the input as JSON. */
export function describeToolCall(toolName: string, input: unknown): string {
  const fields =
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const subject = fields['command'] ?? fields['file_path'] ?? fields['path'] ?? fields['pattern'];
  const detail = typeof subject === 'string' ? subject : JSON.stringify(input ?? {});
  return `${toolName}(${oneLine(detail, 120)})`;
}

/** The state of one interactive session. */
class InteractiveSession {
  private cli!: CliSession;
  private stopEvents: (() => void) | undefined;
  private busy = false;
  private interrupted = false;
  // The background agents the last Ctrl-C stopped: the session that goes on tells its main agent.
  private stopped: StoppedAgents = new Map();
  // After Ctrl-C, waiting notifications wait for the person's next prompt: no turn starts alone.
  private holdNotifications = false;
  private lastIdleInterrupt = 0;
  private exiting = false;
  private readonly queue: string[] = [];
  private finish!: (code: ExitCode) => void;
  readonly done = new Promise<ExitCode>((resolve) => (this.finish = resolve));
  readonly screen: InteractiveScreen;

  constructor(
    private readonly io: CliIo,
    private readonly colors: Colors,
    private readonly tree: AgentTree,
    private readonly sessionOptions: CliSessionOptions,
  ) {
    this.screen = new InteractiveScreen(
      { stdin: io.stdin, stdout: io.stdout, tree: () => this.tree, colors, prompt: '› ' },
      (action) => this.onAction(action),
      () => this.stopBySignal(EXIT_CODES.hangup),
    );
  }

  async open(continueFrom?: CliSessionOptions['continueFrom']): Promise<void> {
    this.cli = await createCliSession({
      ...this.sessionOptions,
      ...(continueFrom ? { continueFrom } : {}),
      ask: async ({ tool, input }) => {
        const answer = await this.screen.ask(
          `${describeToolCall(tool.name, input)} needs approval. Allow? [y/N]`,
        );
        return /^y(es)?$/i.test(answer.trim())
          ? { behavior: 'allow' }
          : { behavior: 'deny', message: 'The person at the terminal said no.' };
      },
    });
    const { redact } = this.cli;
    this.stopEvents = this.cli.session.events.on((event) => this.onEvent(redact(event)));
  }

  get sessionId(): string {
    return this.cli.sessionId;
  }

  /** The main agent's model id, as the session resolved it. */
  get model(): string {
    return this.cli.session.context.options.model;
  }

  private onEvent(event: AgentEvent): void {
    this.tree.handleEvent(event);
    const node = this.tree.get(event.agentId);
    if (!node || node.mode !== 'background') return;
    if (event.type === 'agent.completed' || event.type === 'agent.failed') {
      this.screen.print(
        `${this.endMark(node.status)} background ${node.agentType} "${oneLine(node.description, 50)}" ${endWords(event)}`,
      );
    }
    // A notification queued while nothing runs starts a turn, as the library does.
    if (event.type === 'agent.notification') queueMicrotask(() => this.next());
  }

  private endMark(status: string): string {
    if (status === 'completed') return this.colors.green('✓');
    return status === 'killed' ? this.colors.yellow('■') : this.colors.red('✗');
  }

  private onAction(action: Exclude<EditorAction, { type: 'none' }>): void {
    switch (action.type) {
      case 'submit':
        // Nothing to send: the API refuses a message of only whitespace.
        if (action.text.trim() === '') return;
        if (action.text.startsWith('/')) return void this.slash(action.text);
        if (this.busy) {
          this.queue.push(action.text);
          this.screen.print(
            this.colors.dim(`(queued until the current turn ends) ${oneLine(action.text, 60)}`),
          );
          return;
        }
        void this.turn(action.text);
        return;
      case 'interrupt':
        return this.interrupt();
      case 'background': {
        const current = this.cli.session.foregroundAgents().at(-1);
        if (current && this.cli.session.backgroundAgent(current)) {
          this.screen.print(
            this.colors.dim(
              `Moved ${this.tree.get(current)?.agentType ?? current} to the background.`,
            ),
          );
        }
        return;
      }
      case 'eof':
        return void this.exit(
          EXIT_CODES.success,
          'Stopped: the interactive session ended (Ctrl-D).',
        );
    }
  }

  private interrupt(): void {
    if (this.busy) {
      if (!this.interrupted) this.stopped = this.noteStop('Stopped by Ctrl-C.');
      this.interrupted = true;
      this.screen.setStatus('Stopping every agent…');
      this.cli.session.abort(new DelegateError('ABORTED', 'Stopped by Ctrl-C.'));
      return;
    }
    if (this.screen.editor.text !== '') {
      this.screen.editor.clear();
      return;
    }
    const now = Date.now();
    if (now - this.lastIdleInterrupt <= FORCE_WINDOW_MS)
      return void this.exit(EXIT_CODES.interrupted, 'Stopped by Ctrl-C.');
    this.lastIdleInterrupt = now;
    this.screen.setStatus('Press Ctrl-C again to exit, or type /exit.');
  }

  private async turn(prompt: string): Promise<void> {
    if (this.exiting) return;
    this.busy = true;
    this.interrupted = false;
    if (prompt !== '') {
      // The person spoke: notifications held since a Ctrl-C go with this turn.
      this.holdNotifications = false;
      this.screen.print(`${this.colors.cyan('›')} ${prompt}`);
    }
    this.screen.setStatus('');
    const result = await runTurn({
      cli: this.cli,
      prompt,
      waitForBackground: false,
      tree: this.tree,
      renderer: SILENT_RENDERER,
      stoppedBy: () => (this.interrupted ? 'interrupted' : undefined),
    });
    // The answer is the model's: an escape sequence in it must not act on the terminal.
    if (result.text && result.exitReason === 'completed')
      this.screen.print(printableLines(result.text));
    const total = this.tree.totals();
    const outcome =
      result.exitReason === 'completed'
        ? ''
        : ` · ${result.exitReason}${result.error ? `: ${oneLine(result.error, 100)}` : ''}`;
    this.screen.print(
      this.colors.dim(
        `${formatDuration(result.durationMs)} · session ${formatUsd(total.costUsd)}${outcome}`,
      ),
    );
    if (this.interrupted) {
      // The stopped session cannot run again; a fresh one continues the same conversation.
      const messages = [...this.cli.session.messages];
      await this.close();
      // Every line reached the transcript: the next session may read it back.
      const transcriptComplete = this.cli.session.transcript?.writeErrors.length === 0;
      await this.open({ sessionId: this.cli.sessionId, messages, transcriptComplete });
      // Its main agent hears, with the next prompt, which background agents the stop ended.
      reportStoppedAgents(this.cli.session, this.stopped);
      this.stopped = new Map();
      this.holdNotifications = true;
    }
    this.busy = false;
    this.screen.setStatus('');
    this.next();
  }

  /** Starts the next turn: a queued prompt, else waiting notifications. */
  private next(): void {
    // Nothing new starts once the session is exiting (a signal stopped it).
    if (this.busy || this.exiting) return;
    const queued = this.queue.shift();
    if (queued !== undefined) void this.turn(queued);
    else if (!this.holdNotifications && this.cli.session.tasks.pendingNotifications > 0)
      void this.turn('');
  }

  private slash(line: string): void {
    const [command, ...rest] = line.trim().split(/\s+/);
    const argument = rest.join(' ');
    const { session } = this.cli;
    switch (command ?? '') {
      case '/help':
        return this.screen.print(
          formatTable(SLASH_COMMANDS.map(([name, text]) => [name, text])).join('\n'),
        );
      case '/agents': {
        const definitions = session.context.options.agentDefinitions;
        const agents = definitions ? visibleAgents(session.context, definitions) : [];
        return this.screen.print(
          formatTable([
            ['agent', 'source', 'model'],
            ...agents.map((agent) => [agent.agentType, agent.source, agent.model ?? '(default)']),
          ]).join('\n'),
        );
      }
      case '/tasks': {
        const tasks = session.tasks.list();
        if (tasks.length === 0) return this.screen.print('No tasks yet.');
        return this.screen.print(
          formatTable([
            ['task', 'agent', 'type', 'status', 'description'],
            ...tasks.map((task) => [
              task.id,
              task.agentId ?? '',
              task.type,
              task.status,
              oneLine(task.description, 50),
            ]),
          ]).join('\n'),
        );
      }
      case '/bg':
        if (!argument)
          return this.screen.print(
            'Usage: /bg <agent-id> (Ctrl-B moves the latest foreground agent).',
          );
        return this.screen.print(
          session.backgroundAgent(argument)
            ? `Moved ${argument} to the background.`
            : `${argument} is not a running foreground agent.`,
        );
      case '/stop': {
        const task = session.tasks
          .list()
          .find((candidate) => candidate.id === argument || candidate.agentId === argument);
        if (!task) return this.screen.print(`No task or agent "${argument}"; /tasks lists them.`);
        if (task.status !== 'running')
          return this.screen.print(`${task.id} is already ${task.status}.`);
        session.stopTask(task.id);
        return this.screen.print(`Stopping ${task.id}.`);
      }
      case '/cost':
        return this.screen.print(formatCacheTable(this.tree).join('\n'));
      case '/exit':
        return void this.exit(
          EXIT_CODES.success,
          'Stopped: the interactive session ended (/exit).',
        );
      default:
        return this.screen.print(`Unknown command ${command}; /help lists them.`);
    }
  }

  private async close(): Promise<void> {
    // Also deletes the logs of the session's background shells.
    await this.cli.session.close();
    this.stopEvents?.();
    await this.cli.close();
  }

  /**
   * SIGTERM, or SIGHUP (the terminal closed, also when its input ends first): every agent and
   * shell command stops, then the session exits with the signal's code, rather than leaving
   * them running without it. A later call changes nothing: the first one's note and exit
   * code stand.
   */
  stopBySignal(code: ExitCode): void {
    const why = code === EXIT_CODES.hangup ? 'the terminal closed (SIGHUP)' : 'SIGTERM';
    if (!this.exiting) this.noteStop(`Stopped: ${why}.`);
    this.cli.session.abort(new DelegateError('ABORTED', `Stopped: ${why}.`));
    void this.exit(code);
  }

  /** Notes (and records, for `--resume`) the background agents a stop is about to end. */
  private noteStop(how: string): StoppedAgents {
    return noteStop(this.cli.session, how, (message) =>
      this.screen.print(this.colors.dim(`delegate: ${message}`)),
    );
  }

  private async exit(code: ExitCode, how?: string): Promise<void> {
    if (this.exiting) return;
    if (how !== undefined) this.noteStop(how);
    this.exiting = true;
    try {
      this.screen.stop();
    } catch {
      // The terminal is gone (SIGHUP): restoring it fails, and the agents must still stop.
    }
    await this.close();
    this.finish(code);
  }
}

/** `delegate` in a terminal: a session with a prompt line, the live agent tree and slash commands. */
export async function interactiveCommand(options: {
  flags: RunFlags;
  io: CliIo;
}): Promise<ExitCode> {
  const { flags, io } = options;
  if (io.stdin.isTTY !== true || io.stdout.isTTY !== true) {
    throw new UsageError(
      'The interactive session needs a terminal. Pass a prompt instead: delegate run "<prompt>" (or delegate -p, which reads stdin).',
    );
  }
  const config = resolveConfig({ flags: configFlags(flags), env: io.env, processCwd: io.cwd });
  const colors = colorsFor(io.stdout, io.env);
  const sessionOptions = sessionOptionsFor({ flags, config, io });

  const tree = new AgentTree({ mainModel: config.model.value, prices: config.prices.value });
  const session = new InteractiveSession(io, colors, tree, sessionOptions);
  await session.open();
  tree.main.model = session.model;
  io.stdout.write(
    `${colors.bold('delegate')} · ${printable(config.cwd)}${flags.sim !== undefined ? ' · simulator' : ''} · session ${session.sessionId}\n${colors.dim('Type a task and press Enter. /help lists commands; Ctrl-B backgrounds the running agent; Ctrl-C stops.')}\n`,
  );
  await session.screen.start();
  const onTerminate = (): void => session.stopBySignal(EXIT_CODES.terminated);
  const onHangup = (): void => session.stopBySignal(EXIT_CODES.hangup);
  process.on('SIGTERM', onTerminate);
  process.on('SIGHUP', onHangup);
  try {
    return await session.done;
  } finally {
    process.off('SIGTERM', onTerminate);
    process.off('SIGHUP', onHangup);
  }
}

/** How a background agent's end reads in the session: finished, stopped, or failed and why. */
function endWords(
  event: Extract<AgentEvent, { type: 'agent.completed' | 'agent.failed' }>,
): string {
  if (event.type === 'agent.completed') return 'finished';
  if (event.code === 'ABORTED') return 'was stopped';
  return `failed: ${oneLine(event.error, 80)}`;
}
