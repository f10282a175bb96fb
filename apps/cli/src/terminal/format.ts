/** `1234` → `1.2k`, `1234567` → `1.23M`; small counts stay whole. */
export function formatTokens(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 100_000) return `${(count / 1_000).toFixed(1)}k`;
  if (count < 1_000_000) return `${Math.round(count / 1_000)}k`;
  return `${(count / 1_000_000).toFixed(2)}M`;
}

/** A dollar amount with enough digits to tell small amounts apart (`$0.0042`). */
export function formatUsd(amount: number): string {
  if (amount === 0) return '$0';
  if (amount < 0.01) return `$${amount.toFixed(4)}`;
  if (amount < 1) return `$${amount.toFixed(3)}`;
  return `$${amount.toFixed(2)}`;
}

/** `850` → `850ms`, `4200` → `4.2s`, `192000` → `3m12s`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1_000);
  return `${minutes}m${String(seconds).padStart(2, '0')}s`;
}

// Control characters (C0, DEL, C1) and the bidirectional marks, overrides and isolates that
// reorder what a reader sees: an escape sequence in a model's description or a tool's error
// must not reach the terminal, nor text that displays in another order than it is stored.
const CONTROL =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with each control character (and bidirectional control) shown as `?`, so it prints as it reads. */
export function printable(text: string): string {
  return text.replace(CONTROL, '?');
}

/**
 * `text` as {@link printable}, but keeping its line breaks and tabs: for a model's answer
 * printed to a terminal, where an escape sequence (a title, the clipboard, a cursor move
 * that writes over what was shown) must not act, and the lines must stay.
 */
export function printableLines(text: string): string {
  return text.replace(CONTROL, (character) =>
    character === '\n' || character === '\t' ? character : '?',
  );
}

/** Cuts `text` to one line of at most `width` characters, ending in `…` when cut; control characters show as `?`. */
export function oneLine(text: string, width: number): string {
  const flat = printable(text.replace(/\s+/g, ' ').trim());
  if (flat.length <= width) return flat;
  // By code point, so a character outside the BMP (an emoji) is never split in two.
  const characters = Array.from(flat);
  if (characters.length <= width) return flat;
  return `${characters.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** Text of a table cell shown in a color (`colors.dim`, say): the color is applied after the text is made printable. */
export type StyledText = { readonly text: string; readonly color: (text: string) => string };

/** A table cell: text, colored text, or a run of both (`['a; ', { text: 'b', color }]`). */
export type TableCell = string | StyledText | readonly (string | StyledText)[];

/** Colors `text` with `color` in a table cell; see {@link TableCell}. */
export function styled(text: string, color: (text: string) => string): StyledText {
  return { text, color };
}

/** A cell as shown (printable, colored) and its width on screen. */
function renderCell(cell: TableCell): { shown: string; width: number } {
  const parts = typeof cell === 'string' || !Array.isArray(cell) ? [cell] : cell;
  let shown = '';
  let width = 0;
  for (const part of parts as readonly (string | StyledText)[]) {
    const text = printable(typeof part === 'string' ? part : part.text);
    width += text.length;
    shown += typeof part === 'string' || text === '' ? text : part.color(text);
  }
  return { shown, width };
}

/**
 * Pads every cell so the columns line up; the first row is the header. Cells hold names,
 * values and paths from files (a cloned repository's settings or memory folders, say), so
 * each cell's text is made {@link printable} (every control character, escape sequences
 * included, shows as `?`); a color is given as a {@link StyledText} cell, never as escape
 * codes inside the text.
 */
export function formatTable(
  rows: readonly (readonly TableCell[])[],
  options: { rightAlign?: readonly number[] } = {},
): string[] {
  const rendered = rows.map((row) => row.map(renderCell));
  const widths: number[] = [];
  for (const row of rendered) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.width);
    });
  }
  const right = new Set(options.rightAlign ?? []);
  return rendered.map((row) =>
    row
      .map((cell, index) => {
        const pad = ' '.repeat((widths[index] ?? 0) - cell.width);
        return right.has(index) ? pad + cell.shown : cell.shown + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}

/** `HH:MM:SS.mmm` of an ISO 8601 time (UTC). */
export function clockTime(timestamp: string): string {
  return timestamp.slice(11, 23);
}
