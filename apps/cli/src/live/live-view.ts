import type { Colors } from '../terminal/colors.js';
import type { AgentTree } from '../usage/agent-tree.js';
import { FRAME_MS, renderTree } from './render-tree.js';

/** Ticks between spinner-only frames (a changed tree is drawn at the next tick). */
const SPINNER_TICKS = 3;

/**
 * The agent tree drawn in place on a terminal stream, redrawn at most ten times a second
 * when something changed, and about three times a second while only a spinner turns. `log-update` is imported
 * only here, so runs without a terminal never load it.
 */
export class LiveView {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private ticks = 0;
  private drawnVersion = -1;

  private constructor(
    private readonly draw: ((text: string) => void) & {
      done(): void;
      persist?(text: string): void;
    },
    private readonly stream: NodeJS.WriteStream,
    private readonly tree: AgentTree,
    private readonly colors: Colors,
  ) {}

  /** Starts drawing `tree` on `stream`. */
  static async start(options: {
    stream: NodeJS.WriteStream;
    tree: AgentTree;
    colors: Colors;
  }): Promise<LiveView> {
    const { createLogUpdate } = await import('log-update');
    const draw = createLogUpdate(options.stream, { showCursor: false });
    const view = new LiveView(draw, options.stream, options.tree, options.colors);
    view.timer = setInterval(() => view.tick(), FRAME_MS);
    view.timer.unref();
    view.render();
    return view;
  }

  private tick(): void {
    this.ticks++;
    const changed = this.tree.version !== this.drawnVersion;
    // With nothing new, only the spinner would move: it turns at a third of the frame rate,
    // since each frame re-measures every line of the tree (log-update wraps what it draws).
    const spin =
      this.ticks % SPINNER_TICKS === 0 &&
      this.tree.nodes().some((node) => node.status === 'running');
    if (!changed && !spin) return;
    this.frame++;
    this.render();
  }

  private render(final = false): void {
    this.drawnVersion = this.tree.version;
    const lines = renderTree(this.tree, {
      colors: this.colors,
      width: this.stream.columns || 100,
      now: Date.now(),
      frame: this.frame,
      final,
    });
    this.draw(lines.join('\n'));
  }

  /** Writes a line above the tree that stays in the scrollback. */
  note(text: string): void {
    if (this.draw.persist) this.draw.persist(text);
    this.render();
  }

  /** Draws the final frame and leaves it on screen. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.render(true);
    this.draw.done();
  }
}
