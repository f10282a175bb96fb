import { DelegateError } from '@delegate/core';
import { matchRequest, type RequestMatcher } from './match-request.js';
import { resolveReply, type Policy, type ReplySource } from './policy.js';

/** One rule of a `rules` policy. */
export type Rule = {
  /** Conditions the request must meet. */
  match: RequestMatcher;
  /** The answer when it does. */
  reply: ReplySource;
  /** A name for error messages and debugging. */
  name?: string;
};

/**
 * A policy that answers with the first rule whose conditions the request meets, else with
 * `fallback`. Without a fallback an unmatched request is answered with a non-retryable 500 that
 * quotes the last user text, so a missing rule shows up at once.
 */
export function rules(list: readonly Rule[], options: { fallback?: ReplySource } = {}): Policy {
  return async (request) => {
    const rule = list.find((candidate) => matchRequest(candidate.match, request));
    if (rule) return resolveReply(rule.reply, request);
    if (options.fallback !== undefined) return resolveReply(options.fallback, request);
    throw new DelegateError(
      'NOT_FOUND',
      `api-sim rules: no rule matched request ${request.index} (turn ${request.turnIndex}, last user text ${JSON.stringify(request.lastUserText.slice(0, 200))}). Add a rule or a fallback.`,
    );
  };
}
