import type { AgentDiagnostic } from '@delegate/agent-defs';
import { describe, expect, it } from 'vitest';
import { reportLoadDiagnostics } from './report-diagnostics.js';

const at = (severity: 'error' | 'warning' | 'info') => ({
  filePath: '/p/.claude/agents/a.md',
  line: 3,
  severity,
  reason: `a ${severity}`,
});

function report(diagnostics: AgentDiagnostic[]): string[] {
  const lines: string[] = [];
  reportLoadDiagnostics(diagnostics, (line) => lines.push(line));
  return lines;
}

describe('reportLoadDiagnostics', () => {
  it('lists each file that did not load, then counts; says nothing when there is nothing to say', () => {
    expect(report([at('error'), at('warning'), at('warning')])).toEqual([
      '/p/.claude/agents/a.md:3: error: a error',
      '1 agent file not loaded, 2 warnings; `delegate agents validate` lists every problem.',
    ]);
    // Only warnings: no "0 agent files not loaded".
    expect(report([at('warning')])).toEqual([
      'Agent files loaded with 1 warning; `delegate agents validate` lists every problem.',
    ]);
    expect(report([at('info')])).toEqual([]);
  });

  it('points at validate with the same --agents when an --agents definition has a problem', () => {
    expect(
      report([
        { filePath: '--agents', severity: 'error', reason: 'agent "x" needs a "description"' },
      ]),
    ).toEqual([
      '--agents: error: agent "x" needs a "description"',
      '1 agent file not loaded; `delegate agents validate` with the same `--agents` lists every problem.',
    ]);
  });

  it('shows control characters of a file name or a quoted value as ?, so a file cannot forge lines or drive the terminal', () => {
    const lines = report([
      {
        filePath: '/p/.claude/agents/\u001b]0;PWNED\u0007\u001b[2J\nfake: error.md',
        line: 1,
        severity: 'error',
        reason: 'name "a\u202eb" is not valid',
      },
    ]);
    expect(lines[0]).toBe(
      '/p/.claude/agents/?]0;PWNED??[2J?fake: error.md:1: error: name "a?b" is not valid',
    );
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    expect(lines[0]).not.toMatch(/[\u0000-\u001f\u202e]/);
  });
});
