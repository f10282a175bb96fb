import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitListValue } from './split-list-value.js';

const plainItem = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_*:-]{0,12}$/);
const ruleContent = fc.stringMatching(/^[a-z ,:*-]{1,20}$/);
const toolRule = fc.oneof(
  plainItem,
  fc.tuple(plainItem, ruleContent).map(([tool, content]) => `${tool}(${content})`),
);

describe('splitListValue', () => {
  it('splits on commas and trims', () => {
    expect(splitListValue('Read, Grep ,Glob,, ')).toEqual(['Read', 'Grep', 'Glob']);
  });

  it('keeps commas inside parentheses', () => {
    expect(splitListValue('Bash(git add, git commit), Read, Agent(worker, researcher)')).toEqual([
      'Bash(git add, git commit)',
      'Read',
      'Agent(worker, researcher)',
    ]);
  });

  it('treats a stray closing parenthesis as text, not as a reason to stop splitting', () => {
    expect(splitListValue('Read), Write')).toEqual(['Read)', 'Write']);
  });

  it('returns the items that were joined, whatever their rule content', () => {
    fc.assert(
      fc.property(
        fc.array(toolRule, { maxLength: 8 }),
        fc.constantFrom(',', ', ', ' , '),
        (items, separator) => {
          const expected = items.map((item) => item.trim()).filter((item) => item.length > 0);
          expect(splitListValue(items.join(separator))).toEqual(expected);
        },
      ),
    );
  });

  it('never returns empty or untrimmed items for any text', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        for (const item of splitListValue(text)) {
          expect(item.length).toBeGreaterThan(0);
          expect(item).toBe(item.trim());
        }
      }),
    );
  });
});
