import type { AgentColor } from '@delegate/core';
import stringWidth from 'string-width';
import type { Colors } from '../terminal/colors.js';
import { formatDuration, formatTokens, formatUsd, oneLine, printable } from '../terminal/format.js';
import { type AgentNode, type AgentTree, MAIN_AGENT_ID } from '../usage/agent-tree.js';

/** Fastest redraw of a live view: about ten frames a second. */
export const FRAME_MS = 100;

/** Frames of the running-agent spinner. */
export const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;

/** Options of `renderTree`. */
export type RenderTreeOptions = {
  /** Color functions (identity when colors are off). */
  colors: Colors;
  /** Terminal width; lines are cut to it. */
  width: number;
  /** Current time, for elapsed times. */
  now: number;
  /** Spinner frame counter. */
  frame: number;
  /** The last frame of a run: no key hints. */
  final?: boolean;
};

function paintAgentColor(colors: Colors, color: AgentColor | undefined, text: string): string {
  switch (color) {
    case 'red':
      return colors.red(text);
    case 'blue':
      return colors.blue(text);
    case 'green':
      return colors.green(text);
    case 'yellow':
    case 'orange':
      return colors.yellow(text);
    case 'purple':
    case 'pink':
      return colors.magenta(text);
    case 'cyan':
      return colors.cyan(text);
    case undefined:
      return text;
  }
}

function statusMark(node: AgentNode, options: RenderTreeOptions): string {
  const { colors } = options;
  switch (node.status) {
    case 'running':
      return colors.cyan(SPINNER_FRAMES[options.frame % SPINNER_FRAMES.length]!);
    case 'completed':
      return colors.green('✓');
    case 'failed':
      return colors.red('✗');
    case 'killed':
      return colors.yellow('■');
  }
}

/** `12.3k read · 1.2k written · 340 uncached`. */
export function formatCacheSplit(node: Pick<AgentNode, 'usage'>): string {
  const usage = node.usage;
  return `${formatTokens(usage.cache_read_input_tokens)} read · ${formatTokens(usage.cache_creation_input_tokens)} written · ${formatTokens(usage.input_tokens)} uncached`;
}

function label(node: AgentNode, colors: Colors): string {
  if (node.agentId === MAIN_AGENT_ID) return colors.bold('main');
  const name = paintAgentColor(colors, node.color, colors.bold(printable(node.agentType)));
  return `${name} ${colors.dim(`"${oneLine(node.description, 40)}"`)}`;
}

function activity(node: AgentNode, options: RenderTreeOptions): string {
  const { colors } = options;
  const elapsed = formatDuration((node.endedAt ?? options.now) - node.startedAt);
  switch (node.status) {
    case 'running':
      return node.currentTool
        ? `${colors.cyan(printable(node.currentTool))} · ${elapsed}`
        : elapsed;
    case 'completed':
      return colors.green(`done in ${elapsed}`);
    case 'failed':
      return colors.red(`failed: ${oneLine(node.error ?? 'error', 60)}`);
    case 'killed':
      return colors.yellow(`stopped after ${elapsed}`);
  }
}

/**
 * The agent tree as lines: the main agent, then each sub-agent under its parent, each with
 * its status, mode, current tool or outcome, tokens (read from cache / written / uncached),
 * cost and elapsed time. A finished agent takes one line.
 */
export function renderTree(tree: AgentTree, options: RenderTreeOptions): string[] {
  const { colors } = options;
  const nodes = tree.nodes();
  const lines: string[] = [];
  for (const node of nodes) {
    const depth = tree.depth(node.agentId);
    const parent = node.parentAgentId === undefined ? undefined : tree.get(node.parentAgentId);
    const isLastSibling = parent ? parent.children.at(-1) === node.agentId : true;
    const indent = depth === 0 ? '' : `${'   '.repeat(depth - 1)}${isLastSibling ? '└─' : '├─'} `;
    const mode = node.mode === 'main' ? '' : ` ${colors.dim(`[${node.mode}]`)}`;
    const parts = [
      `${indent}${statusMark(node, options)} ${label(node, colors)}${mode}`,
      activity(node, options),
      colors.dim(formatCacheSplit(node)),
      formatUsd(node.costUsd),
    ];
    lines.push(cut(parts.join(colors.dim(' · ')), options.width));
  }
  const totals = tree.totals();
  lines.push(
    colors.dim(
      cut(
        `total ${formatUsd(totals.costUsd)}${totals.priced ? '' : ' (some models unpriced)'} · ${formatCacheSplit(totals)}${options.final ? '' : ' · Ctrl-B: background the running agent · Ctrl-C: stop'}`,
        options.width,
      ),
    ),
  );
  return lines;
}

// Characters one column wide that the tree itself draws, besides printable ASCII: box
// drawing, the spinner's braille, the status marks, `·` and `…`.
function isNarrowDrawn(code: number): boolean {
  return (
    (code >= 0x20 && code < 0x7f) ||
    (code >= 0x2500 && code <= 0x25ff) ||
    (code >= 0x2800 && code <= 0x28ff) ||
    code === 0x2713 ||
    code === 0x2717 ||
    code === 0x00b7 ||
    code === 0x2026
  );
}

/**
 * Cuts a line to `width` terminal columns (color escapes take none), ending in `…` when cut.
 * Lines of ASCII and the tree's own marks are counted one column a character; a line with
 * anything else (a description in CJK, an emoji) is measured grapheme by grapheme with
 * `string-width`, so a wide character never wraps the line and breaks the redraw.
 */
export function cut(line: string, width: number): string {
  const limit = Math.max(1, width - 1);
  let index = 0;
  let visible = 0;
  for (; index < line.length; index++) {
    const code = line.charCodeAt(index);
    if (code === 0x1b) {
      const end = colorEscapeEnd(line, index);
      if (end === -1) return cutMeasured(line, limit);
      index = end - 1;
      continue;
    }
    if (!isNarrowDrawn(code)) return cutMeasured(line, limit);
    visible++;
  }
  if (visible <= limit) return line;
  // Every character is one column: keep `limit - 1` of them and the ellipsis.
  let result = '';
  visible = 0;
  for (index = 0; index < line.length; index++) {
    if (line.charCodeAt(index) === 0x1b) {
      const end = colorEscapeEnd(line, index);
      result += line.slice(index, end);
      index = end - 1;
      continue;
    }
    if (visible === limit - 1) break;
    result += line[index];
    visible++;
  }
  return line.includes('\u001b') ? `${result}…\u001b[0m` : `${result}…`;
}

// An ANSI color sequence (SGR), the only escape the tree draws.
// eslint-disable-next-line no-control-regex
const COLOR_ESCAPE = /\u001b\[[0-9;]*m/y;
// eslint-disable-next-line no-control-regex
const LEADING_ESCAPE = /^\u001b\[[0-9;]*m/;

/** Where the color escape starting at `index` ends (exclusive), or -1 when none starts there. */
function colorEscapeEnd(line: string, index: number): number {
  COLOR_ESCAPE.lastIndex = index;
  return COLOR_ESCAPE.test(line) ? COLOR_ESCAPE.lastIndex : -1;
}
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function cutMeasured(line: string, limit: number): string {
  if (stringWidth(line) <= limit) return line;
  const colored = line.includes('\u001b');
  let result = '';
  let visible = 0;
  let rest = line;
  while (rest.length > 0) {
    const escape = LEADING_ESCAPE.exec(rest);
    if (escape) {
      result += escape[0];
      rest = rest.slice(escape[0].length);
      continue;
    }
    const next = rest.indexOf('\u001b');
    const plain = next === -1 ? rest : rest.slice(0, next);
    for (const { segment } of graphemes.segment(plain)) {
      const columns = stringWidth(segment);
      // One column stays for the ellipsis.
      if (visible + columns > limit - 1) return colored ? `${result}…\u001b[0m` : `${result}…`;
      result += segment;
      visible += columns;
    }
    rest = next === -1 ? '' : rest.slice(next);
  }
  return result;
}
