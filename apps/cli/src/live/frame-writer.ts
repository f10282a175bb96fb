import ansiEscapes from 'ansi-escapes';
import stringWidth from 'string-width';
import { cut } from './render-tree.js';

const SYNC_START = '\u001b[?2026h';
const SYNC_END = '\u001b[?2026l';

/**
 * Draws a block of lines in place at the bottom of a terminal stream, rewriting only the
 * lines from the first one that changed. Lines must already fit the terminal's width
 * (`renderTree` cuts them to it), so no frame is measured or wrapped again: that per-frame
 * wrapping is what made a general-purpose renderer (log-update) the live view's main cost.
 * The block keeps below the terminal's height; a taller one keeps its first line and its
 * last lines, with a line saying how many were left out (a last frame may be drawn whole).
 */
export class FrameWriter {
  private drawn: string[] = [];
  private width: number;
  private cursorHidden = false;
  private readonly showCursor = (): void => {
    if (this.cursorHidden) this.stream.write(ansiEscapes.cursorShow);
    this.cursorHidden = false;
  };

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly options: { omitted?: (count: number) => string } = {},
  ) {
    this.width = stream.columns || 0;
  }

  /**
   * Draws `lines` over the previous frame. `whole`: every line, however tall (for a last
   * frame, which is never redrawn: what scrolls off stays in the scrollback).
   */
  draw(lines: readonly string[], options: { whole?: boolean } = {}): void {
    const next = options.whole ? [...lines] : this.fitHeight(lines);
    const width = this.stream.columns || 0;
    let output = '';
    if (!this.cursorHidden) {
      output += ansiEscapes.cursorHide;
      this.cursorHidden = true;
      process.once('exit', this.showCursor);
    }
    let start = 0;
    if (width === this.width) {
      const shared = Math.min(next.length, this.drawn.length);
      while (start < shared && next[start] === this.drawn[start]) start++;
      if (start === next.length && next.length === this.drawn.length) return;
      output += this.moveToLine(start);
    } else {
      // After a resize a terminal that re-wraps lines may show the old frame on more rows:
      // go up to where it now starts and draw the whole frame on a cleared screen below.
      output += this.moveUpRows(this.rowsAtWidth(width)) + ansiEscapes.eraseDown;
      this.width = width;
    }
    for (let index = start; index < next.length; index++)
      output += `${next[index]}${ansiEscapes.eraseEndLine}\n`;
    // A shorter frame leaves old lines under it.
    if (next.length < this.drawn.length) output += ansiEscapes.eraseDown;
    this.drawn = next;
    this.write(output);
  }

  /** Writes `text` above the frame, where it stays in the scrollback; the frame is drawn again by the next `draw`. */
  persist(text: string): void {
    const output = `${this.moveToLine(0)}${ansiEscapes.eraseDown}${text}\n`;
    this.drawn = [];
    this.write(output);
  }

  /** Leaves the last frame on screen and shows the cursor again. */
  done(): void {
    this.drawn = [];
    this.showCursor();
    process.off('exit', this.showCursor);
  }

  // The cursor rests at the start of the line under the frame.
  private moveToLine(index: number): string {
    return this.moveUpRows(this.drawn.length - index);
  }

  private moveUpRows(rows: number): string {
    return rows > 0 ? `${ansiEscapes.cursorUp(rows)}\r` : '\r';
  }

  // Rows the drawn frame takes once a terminal of `width` columns re-wraps it (each line was
  // cut to fit the old width, so it took one row then).
  private rowsAtWidth(width: number): number {
    if (width <= 0 || width >= this.width) return this.drawn.length;
    let rows = 0;
    for (const line of this.drawn) rows += Math.max(1, Math.ceil(stringWidth(line) / width));
    return rows;
  }

  private fitHeight(lines: readonly string[]): string[] {
    // One row stays free for the cursor, so the frame never scrolls its own first line away.
    const rows = Math.max(3, (this.stream.rows || 24) - 1);
    if (lines.length <= rows) return [...lines];
    const tail = lines.slice(lines.length - (rows - 2));
    const omitted = lines.length - 1 - tail.length;
    const note = this.options.omitted?.(omitted) ?? `… ${omitted} more`;
    // The note must take one row, like every other line.
    return [lines[0]!, cut(note, this.stream.columns || 100), ...tail];
  }

  private write(output: string): void {
    this.stream.write(this.stream.isTTY ? `${SYNC_START}${output}${SYNC_END}` : output);
  }
}
