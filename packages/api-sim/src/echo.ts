import type { Policy } from './policy.js';

/** A policy that answers with the last user text (or the tool results' text when there is none). */
export const echo: Policy = (request) => {
  if (request.lastUserText.length > 0) return request.lastUserText;
  const results = request.toolResults.map((result) => result.content).join('\n');
  return results.length > 0 ? results : '(empty)';
};
