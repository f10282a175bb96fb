import type { SimRequest } from './policy.js';

/** A text condition: a string (the value must contain it) or a regular expression. */
export type TextMatcher = string | RegExp;

/** Conditions on a request; every condition given must hold. */
export type RequestMatcher = {
  /** The last user message's text contains this string or matches this pattern. */
  lastUserText?: TextMatcher;
  /** The request carries a fork directive (`true`), or one containing / matching this. */
  forkDirective?: true | TextMatcher;
  /** The system prompt contains / matches this. */
  system?: TextMatcher;
  /** The `x-delegate-agent` header contains / matches this. */
  agent?: TextMatcher;
  /** The model name contains / matches this. */
  model?: TextMatcher;
  /** The last user message carries tool results (`true`), none (`false`), or one from the named tool. */
  toolResult?: boolean | string;
  /** The conversation is at this turn (the number of assistant messages so far). */
  turn?: number;
  /** Any other condition. */
  when?: (request: SimRequest) => boolean;
};

function matchesText(matcher: TextMatcher, value: string | undefined): boolean {
  if (value === undefined) return false;
  return typeof matcher === 'string' ? value.includes(matcher) : matcher.test(value);
}

/** True when the request meets every condition of the matcher. */
export function matchRequest(matcher: RequestMatcher, request: SimRequest): boolean {
  if (
    matcher.lastUserText !== undefined &&
    !matchesText(matcher.lastUserText, request.lastUserText)
  ) {
    return false;
  }
  if (matcher.forkDirective !== undefined) {
    if (request.forkDirective === undefined) return false;
    if (
      matcher.forkDirective !== true &&
      !matchesText(matcher.forkDirective, request.forkDirective)
    ) {
      return false;
    }
  }
  if (matcher.system !== undefined && !matchesText(matcher.system, request.system)) return false;
  if (matcher.agent !== undefined && !matchesText(matcher.agent, request.agent)) return false;
  if (matcher.model !== undefined && !matchesText(matcher.model, request.model)) return false;
  if (matcher.toolResult !== undefined) {
    const results = request.toolResults;
    if (matcher.toolResult === true && results.length === 0) return false;
    if (matcher.toolResult === false && results.length > 0) return false;
    if (
      typeof matcher.toolResult === 'string' &&
      !results.some((result) => result.toolName === matcher.toolResult)
    ) {
      return false;
    }
  }
  if (matcher.turn !== undefined && request.turnIndex !== matcher.turn) return false;
  if (matcher.when !== undefined && !matcher.when(request)) return false;
  return true;
}
