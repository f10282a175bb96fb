import { resolve } from 'node:path';
import type { AgentMemoryScope } from '@delegate/core';
import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode, UsageError } from '../exit-codes.js';
import { homeDirectory } from '../settings/home-directory.js';
import { findProjectRoot } from '../settings/load-settings.js';
import { formatTable, printable, printableLines } from '../terminal/format.js';

const SCOPES: readonly AgentMemoryScope[] = ['user', 'project', 'local'];

function pathOptions(io: CliIo, cwd: string | undefined): { cwd: string; homeDir?: string } {
  // Project and local memory live at the project root, wherever in it delegate runs.
  const root = findProjectRoot(resolve(io.cwd, cwd ?? '.'));
  return { cwd: root, homeDir: homeDirectory(io.env) };
}

/** `delegate memory list`. */
export async function memoryListCommand(options: {
  io: CliIo;
  scope?: AgentMemoryScope;
  cwd?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const { listMemory } = await import('@delegate/memory');
  const entries = await listMemory({
    ...pathOptions(io, options.cwd),
    scopes: options.scope ? [options.scope] : SCOPES,
  });
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ memory: entries }, null, 2)}\n`);
    return EXIT_CODES.success;
  }
  if (entries.length === 0) {
    io.stdout.write(
      'No agent has memory here yet. An agent with `memory: user|project|local` in its definition keeps it.\n',
    );
    return EXIT_CODES.success;
  }
  const rows = entries.map((entry) => [
    entry.agentType ?? `(folder ${entry.folderName})`,
    entry.scope,
    String(entry.files.length),
    `${entry.totalBytes} B`,
    entry.directory,
  ]);
  io.stdout.write(
    `${formatTable([['agent', 'scope', 'files', 'size', 'folder'], ...rows], { rightAlign: [2, 3] }).join('\n')}\n`,
  );
  return EXIT_CODES.success;
}

/** Options of the commands that act on one agent's memory (`show`, `clear`). */
type AgentMemoryCommandOptions = {
  io: CliIo;
  agent: string;
  /** One scope; default every scope. */
  scope?: AgentMemoryScope;
  cwd?: string;
  json?: boolean;
};

function checkAgentArgument(command: 'show' | 'clear', agent: string): void {
  if (agent.length === 0) {
    throw new UsageError(
      `memory ${command} needs an agent type, got an empty string. Pass one, for example: \`delegate memory ${command} code-reviewer\` (\`delegate memory list\` shows them).`,
    );
  }
}

/** `delegate memory show <agent>`. */
export async function memoryShowCommand(options: AgentMemoryCommandOptions): Promise<ExitCode> {
  const { io } = options;
  checkAgentArgument('show', options.agent);
  const { readMemory } = await import('@delegate/memory');
  const snapshots = [];
  for (const scope of options.scope ? [options.scope] : SCOPES) {
    snapshots.push(await readMemory(options.agent, scope, pathOptions(io, options.cwd)));
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ memory: snapshots }, null, 2)}\n`);
    return EXIT_CODES.success;
  }
  const present = snapshots.filter((snapshot) => snapshot.exists);
  if (present.length === 0) {
    io.stdout.write(
      `${printable(options.agent)} has no memory${options.scope ? ` in the ${options.scope} scope` : ''}.\n`,
    );
    return EXIT_CODES.success;
  }
  for (const snapshot of present) {
    io.stdout.write(
      printable(`== ${snapshot.agentType} · ${snapshot.scope} · ${snapshot.directory}`) + '\n',
    );
    io.stdout.write(
      // A project's memory comes with its repository: no escape sequence in it may act.
      snapshot.index === undefined
        ? '(no MEMORY.md)\n'
        : `${printableLines(snapshot.index.trimEnd())}\n`,
    );
    const others = snapshot.files.filter((file) => file.path !== 'MEMORY.md');
    if (others.length > 0)
      io.stdout.write(
        `${printable(`topic files: ${others.map((file) => file.path).join(', ')}`)}\n`,
      );
  }
  return EXIT_CODES.success;
}

/** `delegate memory clear <agent>`. */
export async function memoryClearCommand(options: AgentMemoryCommandOptions): Promise<ExitCode> {
  const { io } = options;
  checkAgentArgument('clear', options.agent);
  const { clearMemory } = await import('@delegate/memory');
  const cleared: AgentMemoryScope[] = [];
  for (const scope of options.scope ? [options.scope] : SCOPES) {
    if (await clearMemory(options.agent, scope, pathOptions(io, options.cwd))) cleared.push(scope);
  }
  if (options.json) io.stdout.write(`${JSON.stringify({ agent: options.agent, cleared })}\n`);
  else
    io.stdout.write(
      cleared.length > 0
        ? `Cleared ${printable(options.agent)}'s ${cleared.join(', ')} memory.\n`
        : `${printable(options.agent)} had no memory to clear.\n`,
    );
  return EXIT_CODES.success;
}
