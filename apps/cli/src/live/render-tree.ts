import type { AgentColor } from '@delegate/core';
import type { Colors } from '../terminal/colors.js';
import { formatDuration, formatTokens, formatUsd, oneLine } from '../terminal/format.js';
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
  const name = paintAgentColor(colors, node.color, colors.bold(node.agentType));
  return `${name} ${colors.dim(`"${oneLine(node.description, 40)}"`)}`;
}

function activity(node: AgentNode, options: RenderTreeOptions): string {
  const { colors } = options;
  const elapsed = formatDuration((node.endedAt ?? options.now) - node.startedAt);
  switch (node.status) {
    case 'running':
      return node.currentTool ? `${colors.cyan(node.currentTool)} · ${elapsed}` : elapsed;
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

/** Cuts a line to `width` visible characters (color escapes take no room). */
function cut(line: string, width: number): string {
  let visible = 0;
  let result = '';
  const colored = line.includes('\u001b');
  for (let index = 0; index < line.length; index++) {
    const character = line[index]!;
    if (character === '\u001b') {
      const end = line.indexOf('m', index);
      if (end !== -1) {
        result += line.slice(index, end + 1);
        index = end;
        continue;
      }
    }
    if (visible >= width - 1 && index < line.length - 1) {
      return colored ? `${result}…\u001b[0m` : `${result}…`;
    }
    result += character;
    visible++;
  }
  return result;
}
