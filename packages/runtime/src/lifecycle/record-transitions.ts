import {
  type Message,
  type ToolUseContext,
  type Usage,
  type UserMessage,
  addUsage,
} from '@delegate/core';
import type { AgentWorktree } from '../worktree/worktree.js';
import type { AgentRecord } from './agent-record.js';

// The one module that changes a record's state. Every change has a name, so a reader can
// find every place a status, a background flag or a worktree changes by searching for it.
type Mutable = { -readonly [Key in keyof AgentRecord]: AgentRecord[Key] };

function mutable(record: AgentRecord): Mutable {
  return record as Mutable;
}

/** A run starts: the record is running and tracked by `taskId`. */
export function beginRun(record: AgentRecord, taskId: string): void {
  const state = mutable(record);
  state.status = 'running';
  state.taskId = taskId;
}

/** A foreground run moves to the background (it never moves back). */
export function moveToBackground(record: AgentRecord): void {
  mutable(record).isBackground = true;
}

/** A run ended: completed runs leave the record idle (it may be continued). */
export function endRun(record: AgentRecord, outcome: 'completed' | 'failed' | 'killed'): void {
  mutable(record).status = outcome === 'completed' ? 'idle' : outcome;
}

/** The record's worktree was removed (it had no changes). */
export function forgetWorktree(record: AgentRecord): void {
  delete mutable(record).worktree;
}

/** The record works in `worktree` from now on (its metadata's spec says so too). */
export function useWorktree(record: AgentRecord, worktree: AgentWorktree): void {
  const state = mutable(record);
  state.worktree = worktree;
  state.context = { ...record.context, cwd: worktree.cwd };
  state.spec = { ...record.spec, cwd: worktree.cwd, worktree };
}

/** A finished record is set up for another run: where it runs and what stops it. */
export function prepareContinuation(
  record: AgentRecord,
  options: { isBackground: boolean; abortController: AbortController },
): void {
  const state = mutable(record);
  state.isBackground = options.isBackground;
  const context: ToolUseContext = { ...record.context, abortController: options.abortController };
  state.context = context;
}

/** A kept response adds its usage and cost to the record's totals. */
export function addResponseUsage(
  record: AgentRecord,
  usage: Usage | null | undefined,
  costUsd: number,
): void {
  const state = mutable(record);
  state.usage = addUsage(record.usage, usage);
  state.costUsd = record.costUsd + costUsd;
}

/** Messages join the record's conversation. */
export function appendMessages(record: AgentRecord, messages: readonly Message[]): void {
  (record.messages as Message[]).push(...messages);
}

/** A message for a running record waits for its next turn. */
export function queueMessage(record: AgentRecord, message: UserMessage): void {
  (record.inbox as UserMessage[]).push(message);
}

/** Takes every waiting message (each is delivered once). */
export function takeInbox(record: AgentRecord): UserMessage[] {
  return (record.inbox as UserMessage[]).splice(0, record.inbox.length);
}

/** Puts messages back at the front of the inbox (a continuation took only the first). */
export function returnToInbox(record: AgentRecord, messages: readonly UserMessage[]): void {
  (record.inbox as UserMessage[]).unshift(...messages);
}
