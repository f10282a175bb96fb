import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findPluginAgentsFieldProblems } from './find-plugin-agents-field-problems.js';

describe('findPluginAgentsFieldProblems', () => {
  it('accepts one agent file or a list of them, each starting with ./ and ending in .md', () => {
    expect(findPluginAgentsFieldProblems('./reviewer.md')).toEqual([]);
    expect(findPluginAgentsFieldProblems(['./agents/a.md', './extra/deep/b.md'])).toEqual([]);
    expect(findPluginAgentsFieldProblems([])).toEqual([]);
  });

  it('names each entry Claude Code refuses, and only those', () => {
    expect(
      findPluginAgentsFieldProblems(['./ok.md', './agents', 'agents/x.md', './X.MD', 7]),
    ).toEqual([
      'item 2 "./agents" does not end in ".md"',
      'item 3 "agents/x.md" does not start with "./"',
      'item 4 "./X.MD" does not end in ".md"',
      'item 5 is a number, not a path',
    ]);
    expect(findPluginAgentsFieldProblems('./agents/')).toEqual([
      'the path "./agents/" does not end in ".md"',
    ]);
    expect(findPluginAgentsFieldProblems(true)).toEqual([
      'it is a boolean, not a path or a list of paths',
    ]);
  });

  it('finds a problem exactly when some entry is not text of the form ./….md', () => {
    const entry = fc.oneof(
      fc.string().map((middle) => `./${middle}.md`),
      fc.string(),
      fc.integer(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 6 }), (entries) => {
        const bad = entries.filter(
          (item) => typeof item !== 'string' || !item.startsWith('./') || !item.endsWith('.md'),
        );
        expect(findPluginAgentsFieldProblems(entries)).toHaveLength(bad.length);
      }),
    );
  });
});
