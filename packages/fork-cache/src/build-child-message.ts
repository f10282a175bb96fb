import { checkString } from '@delegate/core';
import { buildForkDirectiveLine, buildForkRulesBlock } from './fork-worker-rules.js';

/**
 * Returns the text a fork child receives as its task in one block: the fork worker rules
 * inside the `FORK_BOILERPLATE_TAG` tag, a blank line, then the directive line
 * (`FORK_DIRECTIVE_PREFIX` and the directive). `buildForkChildMessages` sends the same two
 * parts as two blocks instead, so that siblings can share the rules' cache entry.
 */
export function buildChildMessage(directive: string): string {
  checkString('buildChildMessage()', 'directive', directive);
  return `${buildForkRulesBlock()}\n\n${buildForkDirectiveLine(directive)}`;
}
