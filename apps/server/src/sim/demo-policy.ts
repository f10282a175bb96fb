import { type Policy, echo, rules } from '@delegate/api-sim';

const isMain = (request: { agent?: string }): boolean => request.agent === undefined;

/**
 * The `--sim demo` model: the main agent forks two sub-agents (with `fork: true`; else
 * they run as general-purpose agents) and starts a general-purpose agent in the
 * background that globs the workspace; it answers once every report is back.
 */
export function demoPolicy(): Policy {
  return rules(
    [
      {
        match: { forkDirective: true },
        reply: (request) => `Scope: ${request.forkDirective}\nResult: no issues found.`,
      },
      {
        match: { agent: 'general-purpose', toolResult: false },
        reply: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
      },
      {
        match: { agent: 'general-purpose', toolResult: 'Glob' },
        reply: (request) =>
          `The workspace lists ${request.toolResults[0]?.content.split('\n').filter(Boolean).length ?? 0} entries.`,
      },
      {
        match: { when: isMain, lastUserText: '<task-notification>' },
        reply: 'Every sub-agent has reported back: the audit is complete.',
      },
      {
        match: { when: isMain, toolResult: false },
        reply: [
          {
            type: 'tool_use',
            name: 'Agent',
            input: { description: 'audit the parser', prompt: 'Audit the parser module.' },
          },
          {
            type: 'tool_use',
            name: 'Agent',
            input: { description: 'audit the printer', prompt: 'Audit the printer module.' },
          },
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: 'survey the workspace',
              prompt: 'List what the workspace holds.',
              subagent_type: 'general-purpose',
              run_in_background: true,
            },
          },
        ],
      },
      {
        match: { when: isMain, toolResult: 'Agent' },
        reply: 'Both audits are back; the survey runs in the background.',
      },
    ],
    { fallback: echo },
  );
}
