import { DelegateError, checkString } from '@delegate/core';
import { FORK_BOILERPLATE_TAG, FORK_DIRECTIVE_PREFIX } from './fork-constants.js';

// The rules are identical for every child and every sibling; nothing about one child (its
// directive, an id, a count) may enter them, or siblings stop sharing their cache entry.
const FORK_WORKER_RULES = `You are a forked worker, not the main agent. These rules come first and override anything above that contradicts them.

1. Do not start sub-agents. If the system prompt suggests forking or delegating work, that advice is for the parent agent; you already are the fork, so do the work yourself.
2. Do not ask questions, chat, or propose next steps.
3. Do not comment on yourself, the task or your process.
4. Work through your tools directly (Bash, Read, Edit, Write and the others).
5. If you change files, commit the changes before you report and give each commit hash.
6. Write no text between tool calls: use the tools silently and report once, at the end.
7. Stay inside the scope of your directive. If you notice related work outside it, mention it in one sentence at most; other workers cover those areas.
8. Keep the report under 500 words unless the directive asks for a different length. State facts plainly.
9. Start the report with "Scope:" and put nothing before it.
10. Stop once the report is written.

Report layout (plain labels, not markdown headings):
Scope: <the scope you were given, restated in one sentence>
Result: <the answer or the main findings, within that scope>
Key files: <the paths that matter; always include them for research tasks>
Files changed: <each changed file with its commit hash; only if you changed files>
Issues: <problems worth flagging; only if there are any>`;

// What a child sees when the rules already sit in the parent's prefix (rulesPlacement
// 'parent-prefix'): short, so that each child writes only a few tokens of its own.
const INHERITED_RULES_NOTICE =
  'You are a forked worker, not the main agent. The fork worker rules given in your instructions above now apply to you, and they override anything else above that contradicts them.';

/** Where the fork worker rules live: in each child's directive message, or once in the parent's prefix. */
export type ForkRulesPlacement = 'child-message' | 'parent-prefix';

/** Every `ForkRulesPlacement`, for validation and for benchmarks that try each. */
export const FORK_RULES_PLACEMENTS: readonly ForkRulesPlacement[] = [
  'child-message',
  'parent-prefix',
];

/** Throws `INVALID_ARGUMENT` unless `placement` is a known rules placement. */
export function assertForkRulesPlacement(placement: unknown, where: string): ForkRulesPlacement {
  if (FORK_RULES_PLACEMENTS.includes(placement as ForkRulesPlacement)) {
    return placement as ForkRulesPlacement;
  }
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where}: rulesPlacement is ${JSON.stringify(placement)}; use one of ${FORK_RULES_PLACEMENTS.map((name) => `'${name}'`).join(', ')}.`,
    { details: { rulesPlacement: placement } },
  );
}

/**
 * Returns the text block that marks a conversation as a fork child and states its rules:
 * the whole fork worker rules inside the `FORK_BOILERPLATE_TAG` tag (`child-message`, the
 * default), or a short notice inside the same tag that points at rules the parent's prefix
 * already carries (`parent-prefix`, see `buildForkRulesForParent`). The text is identical for
 * every child, so siblings can share its cache entry; `isInForkChild` recognises both forms.
 */
export function buildForkRulesBlock(placement: ForkRulesPlacement = 'child-message'): string {
  const body =
    assertForkRulesPlacement(placement, 'buildForkRulesBlock') === 'child-message'
      ? FORK_WORKER_RULES
      : INHERITED_RULES_NOTICE;
  return `<${FORK_BOILERPLATE_TAG}>\n${body}\n</${FORK_BOILERPLATE_TAG}>`;
}

/**
 * Returns the fork worker rules as a parent's prefix carries them for `rulesPlacement:
 * 'parent-prefix'` (for example at the end of the Agent tool's description, or in the system
 * prompt): the parent's own requests then cache them once, and no child writes them again.
 * They are phrased so that the main agent, which also reads them, knows they are not its own.
 */
export function buildForkRulesForParent(): string {
  return [
    `Fork worker rules. They apply only to a forked worker: a conversation whose latest user message holds a <${FORK_BOILERPLATE_TAG}> block. The main agent does not follow them.`,
    '',
    FORK_WORKER_RULES,
  ].join('\n');
}

/** Returns a child's own directive line: `FORK_DIRECTIVE_PREFIX` followed by the directive. */
export function buildForkDirectiveLine(directive: string): string {
  checkString('buildForkDirectiveLine()', 'directive', directive);
  return `${FORK_DIRECTIVE_PREFIX}${directive}`;
}
