import { type AgentMemoryScope, invalidArgument, checkObject } from '@delegate/core';
import { type MemoryIndexRead, type MemoryIndexTruncation } from './read-bounded-memory-index.js';

/** What the memory prompt is built from. */
export interface AgentMemoryPromptParts {
  /** The agent type the memory belongs to. */
  agentType: string;
  /** The memory scope. */
  scope: AgentMemoryScope;
  /** The absolute memory folder. */
  directory: string;
  /** What reading MEMORY.md gave. */
  index: MemoryIndexRead;
  /** The line limit for MEMORY.md, repeated in the guidance. */
  maxLines: number;
}

/** Returns the sentence that tells the agent what its scope means for what it writes. */
export function describeMemoryScope(scope: AgentMemoryScope): string {
  switch (scope) {
    case 'user':
      return (
        'This is user-scope memory: it follows you into every project, so write down ' +
        'general lessons and preferences that hold everywhere, not facts about one codebase.'
      );
    case 'project':
      return (
        'This is project-scope memory: it lives inside the project and is shared with the ' +
        'team through version control, so write down what is specific to this project and ' +
        'useful to anyone working on it.'
      );
    case 'local':
      return (
        'This is local-scope memory: it is kept out of version control, so write down what ' +
        'is specific to this project on this machine (local paths, local setup, personal notes).'
      );
    default:
      throw invalidArgument({
        where: 'describeMemoryScope()',
        option: 'scope',
        expected: '"user", "project" or "local"',
        value: scope,
      });
  }
}

function describeTruncation(truncation: MemoryIndexTruncation): string {
  const omitted = `${truncation.omittedBytes} of ${truncation.totalBytes} bytes were left out`;
  if (truncation.reason === 'lines') {
    const total =
      truncation.totalLines === undefined
        ? `more than ${truncation.shownLines} lines`
        : `${truncation.totalLines} lines`;
    return (
      `[MEMORY.md was cut here: it has ${total} and only the first ${truncation.shownLines} ` +
      `are shown; ${omitted}. Shorten the index by moving details into topic files.]`
    );
  }
  return (
    `[MEMORY.md was cut here: only the first ${truncation.shownBytes} bytes ` +
    `(${truncation.shownLines} lines) fit the size limit; ${omitted}. ` +
    'Shorten the index by moving details into topic files.]'
  );
}

function describeIndex(index: MemoryIndexRead): string {
  switch (index.status) {
    case 'missing':
      return 'MEMORY.md does not exist yet. Create it once you have something worth keeping.';
    case 'unreadable':
      return (
        `MEMORY.md exists but could not be read (${index.reason}), so its content is not ` +
        'shown here. Look at the file before relying on what you remember.'
      );
    case 'ok': {
      if (index.text.trim().length === 0 && index.truncation === undefined) {
        return 'MEMORY.md is empty.';
      }
      if (index.truncation === undefined) return index.text.trimEnd();
      return `${index.text.trimEnd()}\n\n${describeTruncation(index.truncation)}`;
    }
  }
}

/** Builds the memory section of an agent's system prompt from already-gathered parts. */
export function buildAgentMemoryPrompt(parts: AgentMemoryPromptParts): string {
  checkObject('buildAgentMemoryPrompt()', 'parts', parts);
  checkObject('buildAgentMemoryPrompt()', 'parts.index', parts.index);
  return [
    '# Persistent memory',
    '',
    `You have a memory folder for the "${parts.agentType}" agent at:`,
    parts.directory,
    '',
    'Whatever you save there is still there the next time an agent of this type runs. ' +
      'Use it to carry lessons, decisions and context from one conversation to the next.',
    '',
    describeMemoryScope(parts.scope),
    '',
    'How to keep it useful:',
    `- MEMORY.md in that folder is the index, and it is shown to you at the start of every run. ` +
      `Keep it short (at most ${parts.maxLines} lines): one line per topic, each pointing to a ` +
      'topic file, for example `- [testing.md](testing.md): how to run and fix the test suite`.',
    '- Put the details in topic files next to MEMORY.md (such as `conventions.md` or ' +
      '`debugging.md`) and open them with your file tools when they matter.',
    '- Save what will still be true later: conventions, decisions and why they were made, ' +
      "pitfalls, the user's stated preferences. Leave out one-off task details, anything you " +
      'can re-read from the code, and secrets.',
    '- When an entry turns out wrong or outdated, fix or remove it instead of adding one that ' +
      'contradicts it.',
    '',
    '## Current MEMORY.md',
    '',
    describeIndex(parts.index),
  ].join('\n');
}
