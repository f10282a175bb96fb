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

/** Pads or cuts every cell so the columns line up (control characters in a cell show as `?`); the first row is the header. */
export function formatTable(
  rows: readonly (readonly string[])[],
  options: { rightAlign?: readonly number[] } = {},
): string[] {
  // Cells hold names and paths from files (a folder of a cloned repository's memory, say):
  // their control characters show as `?`; only color sequences pass.
  rows = rows.map((row) => row.map(printableKeepingColors));
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, visibleLength(cell));
    });
  }
  const right = new Set(options.rightAlign ?? []);
  return rows.map((row) =>
    row
      .map((cell, index) => {
        const pad = ' '.repeat((widths[index] ?? 0) - visibleLength(cell));
        return right.has(index) ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd(),
  );
}

// ANSI color sequences take no room on screen.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** `text` as {@link printable}, except for the color sequences (`ESC [ … m`) it holds. */
function printableKeepingColors(text: string): string {
  let result = '';
  let last = 0;
  for (const match of text.matchAll(ANSI)) {
    result += printable(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return result + printable(text.slice(last));
}

/** Length of `text` on screen (color escapes excluded). */
export function visibleLength(text: string): number {
  return text.replace(ANSI, '').length;
}

/** `HH:MM:SS.mmm` of an ISO 8601 time (UTC). */
export function clockTime(timestamp: string): string {
  return timestamp.slice(11, 23);
}
