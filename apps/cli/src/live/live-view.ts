import type { Colors } from '../terminal/colors.js';
import type { AgentTree } from '../usage/agent-tree.js';
import { FrameWriter } from './frame-writer.js';
import { FRAME_MS, renderTree } from './render-tree.js';

/**
 * The agent tree drawn in place on a terminal stream: redrawn at most ten times a second,
 * and only when something changed or a running agent's spinner and clock moved. Only the
 * lines from the first changed one are written again; a tree taller than the terminal shows
 * its first and last lines until the final frame, which lists every agent. This module is imported only when a
 * live view starts, so runs without a terminal never load it.
 */
export class LiveView {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private drawnVersion = -1;
  private readonly writer: FrameWriter;

  private constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly tree: AgentTree,
    private readonly colors: Colors,
  ) {
    this.writer = new FrameWriter(stream, {
      omitted: (count) =>
        colors.dim(`   … ${count} more agents (all are listed when the run ends)`),
    });
  }

  /** Starts drawing `tree` on `stream`. */
  static start(options: { stream: NodeJS.WriteStream; tree: AgentTree; colors: Colors }): LiveView {
    const view = new LiveView(options.stream, options.tree, options.colors);
    view.timer = setInterval(() => view.tick(), FRAME_MS);
    view.timer.unref();
    view.render();
    return view;
  }

  private tick(): void {
    const changed = this.tree.version !== this.drawnVersion;
    if (!changed && !this.tree.nodes().some((node) => node.status === 'running')) return;
    this.frame++;
    this.render();
  }

  private render(final = false): void {
    this.drawnVersion = this.tree.version;
    this.writer.draw(
      renderTree(this.tree, {
        colors: this.colors,
        width: this.stream.columns || 100,
        now: Date.now(),
        frame: this.frame,
        final,
      }),
      { whole: final },
    );
  }

  /** Writes a line above the tree that stays in the scrollback. */
  note(text: string): void {
    this.writer.persist(text);
    this.render();
  }

  /** Draws the final frame and leaves it on screen. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.render(true);
    this.writer.done();
  }
}
