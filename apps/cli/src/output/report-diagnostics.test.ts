import { describe, expect, it } from 'vitest';
import { reportLoadDiagnostics } from './report-diagnostics.js';

const at = (severity: 'error' | 'warning' | 'info') => ({
  filePath: '/p/.claude/agents/a.md',
  line: 3,
  severity,
  reason: `a ${severity}`,
});

function report(diagnostics: ReturnType<typeof at>[]): string[] {
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
});
