import { DelegateError } from '@delegate/core';
import { resolveReply, type Policy, type ReplySource } from './policy.js';

/**
 * A policy that follows a fixed list of turns: a conversation's n-th answer (n = the number of
 * assistant messages it already holds) is `turns[n]`. Because the turn comes from the request
 * itself, retries repeat the same turn and parallel conversations each follow their own copy of
 * the script. Past the end it answers with `fallback`, or with a non-retryable 500.
 */
export function script(
  turns: readonly ReplySource[],
  options: { fallback?: ReplySource } = {},
): Policy {
  return async (request) => {
    const turn = turns[request.turnIndex];
    if (turn !== undefined) return resolveReply(turn, request);
    if (options.fallback !== undefined) return resolveReply(options.fallback, request);
    throw new DelegateError(
      'LIMIT_EXCEEDED',
      `api-sim script: the script has ${turns.length} turns but conversation ${request.conversationKey} asked for turn ${request.turnIndex + 1}. Add turns or a fallback.`,
    );
  };
}
