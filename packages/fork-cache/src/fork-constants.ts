/**
 * Text of every placeholder `tool_result` a fork child receives for the parent's tool
 * calls. It must never vary (no ids, counts or times): all children of one parent send
 * it, and any difference would end their shared cache prefix early.
 */
export const FORK_PLACEHOLDER_RESULT =
  'Handed off to a forked worker that runs in the background; its report arrives separately.';

/**
 * Name of the tag that wraps the fork worker rules. `isInForkChild` looks for it to
 * refuse a fork inside a fork.
 */
export const FORK_BOILERPLATE_TAG = 'fork-worker-rules';

/** The line start that introduces a fork child's own directive, after the rules. */
export const FORK_DIRECTIVE_PREFIX = 'Your directive: ';
