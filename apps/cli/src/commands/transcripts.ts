import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError, type Message, errorMessage, getText } from '@delegate/core';
import type { TranscriptStore } from '@delegate/runtime';
import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode, UsageError } from '../exit-codes.js';
import { resolveConfig } from '../settings/resolve-config.js';
import { colorsFor } from '../terminal/colors.js';
import { formatTable, oneLine, printable, printableLines } from '../terminal/format.js';
import { checkTranscriptFolder } from '../session/check-transcript-folder.js';

/** The transcript folder runs use: the flag, else the environment and the settings files. */
function transcriptDirectory(io: CliIo, flag: string | undefined): string {
  const config = resolveConfig({ flags: { transcriptDir: flag }, env: io.env, processCwd: io.cwd });
  if (config.transcriptDir.value === false) {
    throw new UsageError(
      `Transcripts are off (transcriptDir: false in ${config.transcriptDir.where ?? 'settings'}); pass --transcript-dir to read a folder.`,
    );
  }
  checkTranscriptFolder(config.transcriptDir.value, config.transcriptDir.where);
  return config.transcriptDir.value;
}

/** A session id, or the start of one. */
const SESSION_ID_PATTERN = '[A-Za-z0-9][A-Za-z0-9_-]{0,127}';
const SESSION_FILE = new RegExp(`^(${SESSION_ID_PATTERN})\\.jsonl$`);
const SESSION_ID = new RegExp(`^${SESSION_ID_PATTERN}$`);

/** Messages read from the start of a transcript to find its first prompt: two, then more. */
const FIRST_MESSAGES = [2, 16];

/** Sessions in a transcript folder: id, last change, size and number of sub-agents, newest first. */
async function listSessions(directory: string): Promise<
  Array<{
    sessionId: string;
    modified: string;
    bytes: number;
    agents: number;
    firstPrompt?: string;
    problem?: string;
  }>
> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return [];
  }
  const { readTranscript } = await import('@delegate/runtime');
  const sessions = [];
  for (const name of names) {
    const match = SESSION_FILE.exec(name);
    if (!match) continue;
    const sessionId = match[1]!;
    const stats = await stat(join(directory, name));
    const agents = await readdir(join(directory, sessionId, 'agents')).then(
      (files) => files.filter((file) => file.endsWith('.jsonl')).length,
      () => 0,
    );
    // Only the start of each file: the first prompt is there (after the agent list note), so
    // a long transcript is not read whole, and damage further on does not hide the prompt.
    let problem: string | undefined;
    let prompt;
    for (const limit of FIRST_MESSAGES) {
      const entries = await readTranscript(join(directory, name), { limit }).catch(
        (error: unknown) => {
          problem = errorMessage(error);
          return undefined;
        },
      );
      prompt = entries?.find((entry) => entry.type === 'user' && !entry.isMeta);
      if (entries === undefined || prompt !== undefined || entries.length < limit) break;
    }
    sessions.push({
      sessionId,
      modified: stats.mtime.toISOString(),
      bytes: stats.size,
      agents,
      ...(prompt?.type === 'user' ? { firstPrompt: getText(prompt.message.content) } : {}),
      ...(problem !== undefined ? { problem } : {}),
    });
  }
  return sessions.sort((a, b) => b.modified.localeCompare(a.modified));
}

/** `delegate transcripts list`. */
export async function transcriptsListCommand(options: {
  io: CliIo;
  transcriptDir?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const directory = transcriptDirectory(io, options.transcriptDir);
  const sessions = await listSessions(directory);
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ directory, sessions }, null, 2)}\n`);
    return EXIT_CODES.success;
  }
  if (sessions.length === 0) {
    io.stdout.write(`No sessions in ${printable(directory)}.\n`);
    return EXIT_CODES.success;
  }
  const rows = sessions.map((session) => [
    session.sessionId,
    session.modified.slice(0, 19).replace('T', ' '),
    String(session.agents),
    oneLine(session.firstPrompt ?? (session.problem ? '(unreadable: see below)' : ''), 50),
  ]);
  io.stdout.write(
    `${formatTable([['session', 'modified (UTC)', 'sub-agents', 'first prompt'], ...rows]).join('\n')}\n`,
  );
  for (const session of sessions)
    if (session.problem) io.stderr.write(`delegate: warning: ${printable(session.problem)}\n`);
  return EXIT_CODES.success;
}

function describeMessage(message: Message): string[] {
  switch (message.type) {
    case 'user': {
      if (typeof message.message.content === 'string')
        return [`${message.isMeta ? 'note' : 'user'}: ${message.message.content}`];
      return message.message.content.map((block) => {
        if (block.type === 'tool_result') {
          const text =
            typeof block.content === 'string' ? block.content : getText(block.content ?? []);
          return `  result${block.is_error ? ' (error)' : ''}: ${oneLine(text, 200)}`;
        }
        return block.type === 'text'
          ? `${message.isMeta ? 'note' : 'user'}: ${block.text}`
          : `  [${block.type}]`;
      });
    }
    case 'assistant':
      return message.message.content.map((block) => {
        if (block.type === 'text') return `assistant: ${block.text}`;
        if (block.type === 'tool_use')
          return `  ${block.name} ${oneLine(JSON.stringify(block.input), 200)}`;
        return `  [${block.type}]`;
      });
    case 'system':
      return [`system (${message.subtype}): ${message.content}`];
    case 'progress':
      return [];
  }
}

/** Sessions an ambiguous id start lists at most. */
const MAX_CANDIDATES_SHOWN = 10;

/**
 * The session `asked` names in `directory`: its id, or the one session whose id starts with it.
 * No match, or more than one, is a `UsageError` saying so (listing the sessions it could be).
 */
async function findSession(directory: string, asked: string): Promise<string> {
  if (!SESSION_ID.test(asked)) {
    throw new UsageError(
      `${JSON.stringify(asked)} is not a session id (letters, digits, "-" and "_"). \`delegate transcripts list\` shows the sessions in ${directory}.`,
    );
  }
  const names = await readdir(directory).catch(() => [] as string[]);
  const ids = names.flatMap((name) => SESSION_FILE.exec(name)?.[1] ?? []);
  if (ids.includes(asked)) return asked;
  const candidates = ids.filter((id) => id.startsWith(asked)).sort();
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) {
    throw new UsageError(
      `no session ${asked} in ${directory}. \`delegate transcripts list\` shows the sessions there.`,
    );
  }
  const shown = candidates.slice(0, MAX_CANDIDATES_SHOWN).join(', ');
  const more =
    candidates.length > MAX_CANDIDATES_SHOWN
      ? ` and ${candidates.length - MAX_CANDIDATES_SHOWN} more`
      : '';
  throw new UsageError(
    `${asked} is the start of ${candidates.length} sessions in ${directory}: ${shown}${more}. Give more of the id.`,
  );
}

/** The transcript file of `--agent`, which must be one of the session's sub-agents. */
async function agentTranscript(
  store: TranscriptStore,
  options: { sessionId: string; agent: string },
): Promise<string> {
  const agents = await store.listAgents();
  if (agents.includes(options.agent)) return store.agentPath(options.agent);
  throw new UsageError(
    agents.length === 0
      ? `--agent ${options.agent}: session ${options.sessionId} has no sub-agents; show its main conversation without --agent.`
      : `--agent ${options.agent}: session ${options.sessionId} has no sub-agent ${options.agent}. Its sub-agents: ${agents.join(', ')}.`,
  );
}

/** `delegate transcripts show <session> [--agent <id>]`. */
export async function transcriptsShowCommand(options: {
  io: CliIo;
  sessionId: string;
  agent?: string;
  transcriptDir?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const directory = transcriptDirectory(io, options.transcriptDir);
  const sessionId = await findSession(directory, options.sessionId);
  const { TranscriptStore, readTranscript } = await import('@delegate/runtime');
  const store = new TranscriptStore({ directory, sessionId });
  const path = options.agent
    ? await agentTranscript(store, { sessionId, agent: options.agent })
    : store.sessionPath();
  let entries;
  try {
    entries = await readTranscript(path, {
      onWarning: (message) => void io.stderr.write(`delegate: warning: ${printable(message)}\n`),
    });
  } catch (error) {
    // The file went away since it was listed: no errno text, as when it was never there.
    if (DelegateError.hasCode(error, 'NOT_FOUND'))
      throw new UsageError(`no session ${sessionId} in ${directory} (its transcript is gone).`);
    const message = (error as Error).message.replace(/\.+$/, '');
    throw new UsageError(
      `${message}. \`delegate transcripts list\` shows the sessions in ${directory}.`,
    );
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    return EXIT_CODES.success;
  }
  const colors = colorsFor(io.stdout, io.env);
  io.stdout.write(colors.dim(`${printable(path)}\n`));
  if (entries.length === 0) io.stdout.write(colors.dim('(no messages)\n'));
  for (const entry of entries) {
    // What a model, a tool or the file wrote: no escape sequence in it may act on a terminal.
    for (const line of describeMessage(entry)) io.stdout.write(`${printableLines(line)}\n`);
  }
  if (!options.agent) {
    const agents = await store.listAgents();
    if (agents.length > 0)
      io.stdout.write(
        colors.dim(`\nsub-agents: ${printable(agents.join(', '))} (show one with --agent <id>)\n`),
      );
  }
  return EXIT_CODES.success;
}
