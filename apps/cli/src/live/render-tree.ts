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
        `total ${formatUsd(totals.costUsd)}${totals.priced ? '' : ' (some models unpriced)'} · ${formatCacheSplit(totals)}${keyHints(nodes, options)}`,
        options.width,
      ),
    ),
  );
  return lines;
}

/** The keys the last line offers: Ctrl-B only while a foreground sub-agent runs to move. */
function keyHints(nodes: readonly AgentNode[], options: RenderTreeOptions): string {
  if (options.final) return '';
  const movable = nodes.some(
    (node) => node.status === 'running' && (node.mode === 'foreground' || node.mode === 'fork'),
  );
  return movable ? ' · Ctrl-B: background the running agent · Ctrl-C: stop' : ' · Ctrl-C: stop';
}

// Characters one column wide that the tree itself draws, besides printable ASCII: box
// drawing, `■`, the spinner's braille, the status marks, `·` and `…`.
function isNarrowDrawn(code: number): boolean {
  return (
    (code >= 0x20 && code < 0x7f) ||
    (code >= 0x2500 && code <= 0x257f) ||
    code === 0x25a0 ||
    (code >= 0x2800 && code <= 0x28ff) ||
    code === 0x2713 ||
    code === 0x2717 ||
    code === 0x00b7 ||
    code === 0x2026
  );
}

// An ANSI color sequence (SGR), the only escape the tree draws.
// eslint-disable-next-line no-control-regex
const COLOR_ESCAPE = /\u001b\[[0-9;]*m/y;
// A grapheme that is a control character (C0, DEL, C1).
// eslint-disable-next-line no-control-regex
const CONTROL = /^[\u0000-\u001f\u007f-\u009f]$/;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** A piece of a line and the terminal columns it takes. */
type Unit = { text: string; columns: number };

/**
 * The line as color escapes (no columns) and characters with their widths: the tree's own
 * characters count one column each; any run of other characters is measured grapheme by
 * grapheme with `string-width`, and a control character (a stray escape) becomes `?`.
 */
function* unitsOf(line: string): Generator<Unit> {
  let index = 0;
  while (index < line.length) {
    const code = line.charCodeAt(index);
    if (code === 0x1b) {
      COLOR_ESCAPE.lastIndex = index;
      if (COLOR_ESCAPE.test(line)) {
        yield { text: line.slice(index, COLOR_ESCAPE.lastIndex), columns: 0 };
        index = COLOR_ESCAPE.lastIndex;
        continue;
      }
    } else if (isNarrowDrawn(code)) {
      yield { text: line[index]!, columns: 1 };
      index++;
      continue;
    }
    let end = index + 1;
    while (end < line.length) {
      const next = line.charCodeAt(end);
      if (next === 0x1b || isNarrowDrawn(next)) break;
      end++;
    }
    for (const { segment } of graphemes.segment(line.slice(index, end))) {
      yield CONTROL.test(segment)
        ? { text: '?', columns: 1 }
        : { text: segment, columns: stringWidth(segment) };
    }
    index = end;
  }
}

/**
 * Cuts a line to one column less than `width` (color escapes take none), ending in `…` when
 * cut, so it never reaches the last column and a wide character (CJK, an emoji) never wraps
 * it and breaks the redraw. Control characters other than color escapes print as `?`.
 */
export function cut(line: string, width: number): string {
  const limit = Math.max(1, width - 1);
  const units = [...unitsOf(line)];
  let total = 0;
  for (const unit of units) total += unit.columns;
  if (total <= limit) return units.map((unit) => unit.text).join('');
  let result = '';
  let visible = 0;
  let colored = false;
  for (const unit of units) {
    if (unit.columns === 0) colored = true;
    // One column stays for the ellipsis.
    if (visible + unit.columns > limit - 1) break;
    result += unit.text;
    visible += unit.columns;
  }
  return colored ? `${result}…\u001b[0m` : `${result}…`;
}
