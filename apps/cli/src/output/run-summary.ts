import type { Colors } from '../terminal/colors.js';
import {
  formatDuration,
  formatTable,
  formatTokens,
  formatUsd,
  oneLine,
  printableLines,
} from '../terminal/format.js';
import type { AgentTree } from '../usage/agent-tree.js';
import type { RunResult } from './run-renderer.js';

/** A table of every agent: status, mode, tokens read from cache / written / uncached, output, cost. */
export function formatCacheTable(tree: AgentTree): string[] {
  const rows: string[][] = [
    ['agent', 'mode', 'status', 'cache read', 'cache write', 'uncached', 'output', 'cost'],
  ];
  for (const node of tree.nodes()) {
    const depth = tree.depth(node.agentId);
    const name =
      node.agentId === 'main'
        ? 'main'
        : `${'  '.repeat(Math.max(0, depth - 1))}${node.agentType} "${oneLine(node.description, 28)}"`;
    rows.push([
      name,
      node.mode,
      node.status,
      formatTokens(node.usage.cache_read_input_tokens),
      formatTokens(node.usage.cache_creation_input_tokens),
      formatTokens(node.usage.input_tokens),
      formatTokens(node.usage.output_tokens),
      formatUsd(node.costUsd) + (node.priced ? '' : '?'),
    ]);
  }
  const totals = tree.totals();
  rows.push([
    'total',
    '',
    '',
    formatTokens(totals.usage.cache_read_input_tokens),
    formatTokens(totals.usage.cache_creation_input_tokens),
    formatTokens(totals.usage.input_tokens),
    formatTokens(totals.usage.output_tokens),
    formatUsd(totals.costUsd) + (totals.priced ? '' : '?'),
  ]);
  return formatTable(rows, { rightAlign: [3, 4, 5, 6, 7] });
}

/** How a run that did not complete ended, with what to do where there is something to do. */
export function describeEnd(run: Pick<RunResult, 'exitReason' | 'error'>): string {
  // An error can quote what a server answered: its control characters show as `?`.
  const result = run.error === undefined ? run : { ...run, error: printableLines(run.error) };
  switch (result.exitReason) {
    case 'interrupted':
      return 'stopped by Ctrl-C';
    case 'terminated':
      return 'stopped by SIGTERM';
    case 'hangup':
      return 'stopped: the terminal closed (SIGHUP)';
    case 'output_closed':
      return 'stopped: the output was closed';
    case 'max_turns':
      return result.error ?? 'the main agent reached its turn limit: pass a higher --max-turns';
    case 'error':
      return /connection error/i.test(result.error ?? '')
        ? `${result.error} Is the API reachable? Check ANTHROPIC_BASE_URL, or use --sim to try offline.`
        : (result.error ?? 'error');
    case 'aborted':
    case 'completed':
      return `${result.exitReason}${result.error ? `: ${result.error}` : ''}`;
  }
}

/** The lines printed after a `text` run: how it ended, and the agents with their cost. */
export function formatRunSummary(
  result: RunResult,
  options: { colors: Colors; showTree: boolean },
): string[] {
  const { colors } = options;
  const totals = result.tree.totals();
  const lines: string[] = [];
  if (options.showTree && result.tree.nodes().length > 1)
    lines.push(...formatCacheTable(result.tree));
  const outcome =
    result.exitReason === 'completed' ? colors.green('done') : colors.red(describeEnd(result));
  lines.push(
    colors.dim(
      `${outcome} · ${result.numTurns} turn${result.numTurns === 1 ? '' : 's'} · ${formatDuration(result.durationMs)} · ${formatUsd(totals.costUsd)}${totals.priced ? '' : ' (some models have no price)'} · session ${result.sessionId}`,
    ),
  );
  return lines;
}
