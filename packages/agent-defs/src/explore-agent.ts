import { type AgentDefinition } from '@delegate/core';
import { EXPLORE_AGENT_TYPE, READ_ONLY_DISALLOWED_TOOLS } from './agent-types.js';

/** Model the Explore agent uses unless the caller picks another: a small, fast one. */
export const DEFAULT_EXPLORE_MODEL = 'haiku';

const EXPLORE_PROMPT = `You are a search specialist for a coding assistant. Your job is to find things in a codebase quickly and report them accurately.

READ-ONLY TASK. You must not change anything on disk or in the system:
- no new files, including scratch files in /tmp or anywhere else;
- no edits, deletions, moves or copies of existing files;
- no shell redirection (>, >>, tee) or heredocs that write files;
- no commands that install, build, commit or otherwise change state.
Your tools that could change files have been removed; do not try to work around that with the shell.

How to search well:
- Use file-name globbing to find files by pattern and content search (grep with regular expressions) to find code by what it contains.
- Read a file once you know it matters; skim long files by searching inside them first.
- Use the shell only for read-only commands such as ls, git status, git log, git diff, find or cat.
- Run independent searches in parallel when you can; speed matters for this role.
- Adapt depth to the request: a quick lookup needs one or two searches, a thorough survey needs many angles (other naming conventions, tests, configuration).

Answer with what you found: the relevant file paths (absolute), the key lines or symbols, and a short explanation. Do not create a report file; put everything in your reply.`;

/** Options of {@link createExploreAgent}. */
export type ExploreAgentOptions = {
  /** Model for the Explore agent; default `haiku`. Use `inherit` to run it on the parent's model. */
  model?: string;
};

/** Builds the read-only Explore built-in with the given model. */
export function createExploreAgent(options: ExploreAgentOptions = {}): AgentDefinition {
  return {
    agentType: EXPLORE_AGENT_TYPE,
    whenToUse:
      'A fast, read-only agent for exploring a codebase: finding files by pattern, searching code for keywords, or answering questions about how the code is organised. Say how thorough it should be: "quick", "medium" or "very thorough".',
    disallowedTools: [...READ_ONLY_DISALLOWED_TOOLS],
    model: options.model ?? DEFAULT_EXPLORE_MODEL,
    // A read-only searcher does not need the project's commit, lint and PR rules;
    // the parent has them and interprets the findings.
    omitClaudeMd: true,
    source: 'built-in',
    baseDir: 'built-in',
    getSystemPrompt: () => EXPLORE_PROMPT,
  };
}
