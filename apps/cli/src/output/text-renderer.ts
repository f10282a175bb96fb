import type { AgentEvent } from '@delegate/core';
import type { QueryEvent } from '@delegate/runtime';
import type { LiveView } from '../live/live-view.js';
import type { Colors } from '../terminal/colors.js';
import type { AgentTree } from '../usage/agent-tree.js';
import { oneLine, printable, printableLines } from '../terminal/format.js';
import { formatPlainEventLine } from './plain-event-line.js';
import type { RunRenderer, RunResult, RunStartInfo } from './run-renderer.js';
import { formatRunSummary } from './run-summary.js';

/**
 * The `text` format: the final answer on stdout; on stderr, the live agent tree when stderr
 * is a terminal, else one plain line per lifecycle event; a short summary at the end.
 */
export class TextRenderer implements RunRenderer {
  private live: LiveView | undefined;

  constructor(
    private readonly options: {
      stdout: (text: string) => void;
      stderr: NodeJS.WriteStream;
      tree: AgentTree;
      colors: Colors;
      /** Draw the live tree (stderr is a terminal). */
      live: boolean;
      /** stdout is a terminal: the answer is printed with its control characters as `?`. */
      stdoutIsTerminal?: boolean;
      /** Warning codes not printed, because the command reports them itself at the end. */
      omitWarnings?: readonly string[];
    },
  ) {}

  /** Starts the live view, when there is one. */
  async open(): Promise<void> {
    if (!this.options.live) return;
    const { LiveView } = await import('../live/live-view.js');
    this.live = LiveView.start({
      stream: this.options.stderr,
      tree: this.options.tree,
      colors: this.options.colors,
    });
  }

  /** The live view, for notes that must appear above it. */
  get liveView(): LiveView | undefined {
    return this.live;
  }

  start(info: RunStartInfo): void {
    if (this.live) return;
    this.plain(
      `session ${info.sessionId} · ${info.model} · ${info.cwd}${info.apiKeySource === 'sim' ? ' · simulator' : ''}`,
    );
  }

  onMainEvent(_event: QueryEvent): void {
    // The main agent's tool calls arrive as agent.tool_use events like everyone else's.
  }

  onAgentEvent(event: AgentEvent): void {
    if (event.type === 'agent.warning' && this.options.omitWarnings?.includes(event.code)) return;
    if (this.live) {
      // What a model or a tool wrote is printed with its control characters as `?`.
      if (event.type === 'agent.warning')
        this.live.note(printable(`warning (${event.agentId}): ${event.message}`));
      if (event.type === 'agent.notification') {
        const node = this.options.tree.get(event.agentId);
        this.live.note(
          printable(
            `<task-notification> from ${node?.agentType ?? event.agentId} "${oneLine(node?.description ?? '', 60)}" (${event.status}) queued for ${node?.parentAgentId ?? 'its parent'}`,
          ),
        );
      }
      return;
    }
    const line = formatPlainEventLine(event);
    if (line !== undefined) this.plain(line);
  }

  /** A plain line: what it quotes (a model name from a settings file, the cwd) shows its control characters as `?`. */
  private plain(line: string): void {
    this.options.stderr.write(`${printable(line)}\n`);
  }

  async finish(result: RunResult): Promise<void> {
    this.live?.stop();
    this.options.stderr.write(
      `${formatRunSummary(result, { colors: this.options.colors, showTree: !this.live }).join('\n')}\n`,
    );
    if (result.text) {
      // Into a pipe the answer goes byte for byte; on a terminal an escape in it must not act.
      const text = this.options.stdoutIsTerminal ? printableLines(result.text) : result.text;
      this.options.stdout(text.endsWith('\n') ? text : `${text}\n`);
    }
  }
}
