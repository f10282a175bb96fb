/** Lines picked out of text that arrives in pieces. */
export type CollectedLines = {
  /** The selected lines, without line endings, each cut to the kept length. */
  lines: string[];
  /** Length (UTF-16 code units) of each selected line before it was cut. */
  lineLengths: number[];
  /** Number of lines in the whole text. */
  totalLines: number;
};

/**
 * A copy of `text` that shares no memory with the string it was sliced from: V8 keeps a
 * slice's whole parent alive, and the kept start of a long line is a slice of a big piece.
 */
function copyOf(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}

/** Gathers lines from pieces of text; see `createLineCollector`. */
export type LineCollector = {
  /** Takes the next piece of text. */
  add(text: string): void;
  /** Ends the text (a last line without a line ending counts) and returns what was kept. */
  finish(): CollectedLines;
};

/**
 * Keeps lines `offset`…`offset + limit - 1` (1-based) of a text fed in pieces, at most
 * `keep` characters of each (and each line's full length), and counts all lines. Work and
 * memory are linear in the text and bounded by what is kept: a line is never joined into
 * one string, and the rest of a long line is skipped as it arrives. Lines end as
 * `splitLines` ends them: at LF or CRLF (the `\r` is not part of the line).
 */
export function createLineCollector(options: {
  offset: number;
  limit: number;
  keep: number;
}): LineCollector {
  const { offset, keep } = options;
  const lastWanted = offset + options.limit - 1;
  const lines: string[] = [];
  const lineLengths: number[] = [];
  let lineNumber = 1;
  let kept = '';
  let length = 0;
  let endsWithCarriageReturn = false;
  let lineStarted = false;

  const isWanted = (): boolean => lineNumber >= offset && lineNumber <= lastWanted;

  const addPiece = (text: string, start: number, end: number): void => {
    if (end <= start) return;
    lineStarted = true;
    if (!isWanted()) return;
    length += end - start;
    endsWithCarriageReturn = text.charCodeAt(end - 1) === 0x0d;
    if (kept.length < keep) kept += text.slice(start, Math.min(end, start + keep - kept.length));
  };

  const endLine = (atLineFeed: boolean): void => {
    if (isWanted()) {
      const fullLength = atLineFeed && endsWithCarriageReturn ? length - 1 : length;
      const line = kept.length > fullLength ? kept.slice(0, fullLength) : kept;
      lines.push(copyOf(line));
      lineLengths.push(fullLength);
    }
    lineNumber++;
    kept = '';
    length = 0;
    endsWithCarriageReturn = false;
    lineStarted = false;
  };

  return {
    add(text) {
      let start = 0;
      for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
        addPiece(text, start, newline);
        endLine(true);
        start = newline + 1;
      }
      addPiece(text, start, text.length);
    },
    finish() {
      if (lineStarted) endLine(false);
      return { lines, lineLengths, totalLines: lineNumber - 1 };
    },
  };
}
