import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFullYaml } from './parse-full-yaml.js';
import { parseSimpleYaml, type DuplicateKeys } from './parse-simple-yaml.js';

const keys = ['name', 'description', 'tools', 'model', 'x', 'a-b', 'k_1', 'Name'];
const inlineValues = [
  'reviewer',
  'Reviews code.',
  'Use when: asked',
  'Read, Grep, Bash(git add, git commit)',
  'Read Grep Glob',
  'ends with a no-break space\u00a0',
  '\u3000starts with an ideographic space',
  '[a\u00a0, b]',
  'text # comment',
  'text#hash',
  'ends with colon:',
  'a:b',
  'http://example.com/x',
  '"double \\"quoted\\" \\n \\x41 \\u00e9"',
  '"bad \\q escape"',
  '"unclosed',
  '"closed" trailing',
  '"closed" # comment',
  "'single ''quoted'''",
  "'unclosed",
  '[Read, Grep]',
  '[Read, "Gr, ep", \'x\']',
  '[]',
  '[a,]',
  '[a, [b]]',
  '[a: b]',
  '{a: 1}',
  '|',
  '|-',
  '|+',
  '>',
  '>-',
  '| # note',
  '|2',
  '*alias',
  '&anchor value',
  '!tag value',
  '@mention',
  '`code`',
  '%percent',
  '**bold**: text',
  '1',
  '-1',
  '007',
  '1.5',
  '0x1F',
  '1e3',
  'true',
  'False',
  'null',
  '~',
  'yes',
  '-foo',
  ':x',
  '?x',
  'trailing spaces   ',
  'tab\there',
  'a : b',
  '',
];
const otherLines = [
  '  more text',
  '  user: hello',
  '  - item',
  '- item',
  '- "quoted item"',
  '- [a, b]',
  '- a: b',
  '-',
  '    deeper text',
  '',
  '   ',
  '  # indented comment',
  '# comment',
  '\tindented with a tab',
  'plain at column zero',
  '---',
  '...',
  '  "quoted continuation"',
  '  ---',
  '  text # with comment',
  '  text:',
  '      more indented',
];

const keyLine = fc
  .tuple(fc.constantFrom(...keys), fc.constantFrom(...inlineValues), fc.constantFrom(' ', '  ', ''))
  .map(([key, value, space]) => (value === '' ? `${key}:` : `${key}:${space}${value}`));
const anyLine = fc.oneof(
  { weight: 3, arbitrary: keyLine },
  { weight: 2, arbitrary: fc.constantFrom(...otherLines) },
);
const yamlText = fc
  .tuple(fc.array(anyLine, { minLength: 1, maxLength: 8 }), fc.boolean())
  .map(([lines, crlf]) => lines.join(crlf ? '\r\n' : '\n'));

function agreesWithFullParser(text: string, duplicateKeys: DuplicateKeys): void {
  const simple = parseSimpleYaml(text, duplicateKeys);
  if (simple.kind === 'unsupported') return;
  const full = parseFullYaml(text, duplicateKeys);
  if (simple.kind === 'error') {
    expect(full.ok, `simple parser refused, full parser read: ${JSON.stringify(text)}`).toBe(false);
    return;
  }
  expect(full.ok, `simple parser read, full parser refused: ${JSON.stringify(text)}`).toBe(true);
  if (!full.ok) return;
  expect(simple.record, JSON.stringify(text)).toStrictEqual(full.value ?? {});
  expect(simple.keyLines, JSON.stringify(text)).toStrictEqual(full.keyLines);
}

describe('parseSimpleYaml', () => {
  it('reads the frontmatter real agent files use', () => {
    const result = parseSimpleYaml(
      [
        'name: code-reviewer',
        'description: |',
        '  Reviews code.',
        '',
        '  <example>',
        '  user: "check this"',
        '  </example>',
        'tools: Read, Grep',
        'skills:',
        '  - one',
        '  - "two"',
        'maxTurns: 12',
        'color: "#ff0000"',
        'model: sonnet # the default',
      ].join('\n'),
      'error',
    );
    expect(result).toStrictEqual({
      kind: 'mapping',
      record: {
        name: 'code-reviewer',
        description: 'Reviews code.\n\n<example>\nuser: "check this"\n</example>\n',
        tools: 'Read, Grep',
        skills: ['one', 'two'],
        maxTurns: 12,
        color: '#ff0000',
        model: 'sonnet',
      },
      keyLines: new Map([
        ['name', 1],
        ['description', 2],
        ['tools', 8],
        ['skills', 9],
        ['maxTurns', 12],
        ['color', 13],
        ['model', 14],
      ]),
    });
  });

  it('knows that a plain value holding ": " and a repeated key are YAML errors', () => {
    expect(parseSimpleYaml('name: a\ndescription: Use when: asked', 'error')).toStrictEqual({
      kind: 'error',
      line: 2,
      code: 'mapping-in-plain-value',
      key: 'description',
    });
    expect(parseSimpleYaml('name: a\nname: b', 'error')).toMatchObject({
      kind: 'error',
      code: 'duplicate-key',
      line: 2,
    });
    expect(parseSimpleYaml('name: a\nname: b', 'last-wins')).toMatchObject({
      kind: 'mapping',
      record: { name: 'b' },
    });
  });

  it('leaves anchors, tags, nested mappings and multi-line quotes to the full parser', () => {
    for (const text of [
      'a: &x 1',
      'a: !!str 1',
      'hooks:\n  PreToolUse: []',
      'description: "two\n  lines"',
      'a: 1.5',
    ]) {
      expect(parseSimpleYaml(text, 'error').kind, text).toBe('unsupported');
    }
  });

  it('keeps as many line breaks of a `|+` value at the end of the frontmatter as YAML does', () => {
    // Frontmatter text ends with the line break before the closing ---, which is no blank line.
    expect(parseSimpleYaml('name: a\ndescription: |+\n  Plans.\n', 'error')).toMatchObject({
      kind: 'mapping',
      record: { description: 'Plans.\n' },
    });
    for (const text of [
      'description: |+\n  Plans.\n',
      'description: |+\n  Plans.\n\n',
      'description: |+\n  Plans.',
      'description: >+\n  Plans.\n\n\n',
      'description: |+\n  Plans.\n\nname: a\n',
      'description: |+\n',
    ]) {
      agreesWithFullParser(text, 'error');
    }
  });

  it('answers exactly as the full YAML parser does whenever it answers', () => {
    fc.assert(
      fc.property(yamlText, fc.constantFrom<DuplicateKeys>('error', 'last-wins'), (text, mode) => {
        agreesWithFullParser(text, mode);
      }),
      { numRuns: 3000 },
    );
  });
});
