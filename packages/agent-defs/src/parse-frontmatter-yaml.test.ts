import { describe, expect, it } from 'vitest';
import {
  MAX_FRONTMATTER_DEPTH,
  MAX_FRONTMATTER_LENGTH,
  parseFrontmatterYaml,
} from './parse-frontmatter-yaml.js';
import {
  MAX_YAML_ALIAS_CHARACTERS,
  MAX_YAML_ALIAS_COUNT,
  parseFullYaml,
} from './parse-full-yaml.js';

function read(text: string): Record<string, unknown> {
  const result = parseFrontmatterYaml(text);
  if (!result.ok) throw new Error(`expected a reading, got ${result.failure.message}`);
  return result.record;
}

function failure(text: string): { stage: string; code: string; message: string; line?: number } {
  const result = parseFrontmatterYaml(text);
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.record)}`);
  return { stage: result.stage, ...result.failure };
}

describe('parseFrontmatterYaml: strict YAML, then Claude Code’s repair', () => {
  it('reads strict YAML as YAML does, with no repair', () => {
    const result = parseFrontmatterYaml('name: a\ntools: Read # the only one\nmodel: sonnet');
    expect(result).toMatchObject({
      ok: true,
      record: { name: 'a', tools: 'Read', model: 'sonnet' },
    });
    expect(result.ok && result.repair).toBeUndefined();
  });

  it('quotes a single-line value holding ": " and says the repair was needed', () => {
    const result = parseFrontmatterYaml('name: a\ndescription: Use when: asked');
    expect(result).toMatchObject({
      ok: true,
      record: { name: 'a', description: 'Use when: asked' },
      repair: { quotedLines: [{ line: 2, key: 'description', value: 'Use when: asked' }] },
    });
  });

  it('allows a repeated key in the repair pass, the last one winning', () => {
    const result = parseFrontmatterYaml('name: first\ndescription: d\nname: second');
    expect(result).toMatchObject({
      ok: true,
      record: { name: 'second' },
      repair: {
        strictFailure: { code: 'duplicate-key' },
        repeatedKeys: [{ key: 'name', lines: [1, 3] }],
      },
    });
  });

  it('changes valid lines too once a repair is needed, as Claude Code does', () => {
    const record = read(
      'name: a\ndescription: Use when: asked\ntools: Read # note\nskills: {x, y}\ncolor: [a, b]\nmodel: &m sonnet',
    );
    expect(record).toStrictEqual({
      name: 'a',
      description: 'Use when: asked',
      tools: 'Read # note',
      skills: '{x, y}',
      color: ['a', 'b'],
      model: '&m sonnet',
    });
  });

  it('escapes backslashes and quotes inside a quoted value', () => {
    expect(read('name: a\ndescription: C:\\dir: say "hi"')).toMatchObject({
      description: 'C:\\dir: say "hi"',
    });
  });

  it('turns each leading tab into two spaces', () => {
    expect(read('name: a\ntools:\n\t- Read\n  - Grep')).toMatchObject({ tools: ['Read', 'Grep'] });
  });

  it('does not repair a CRLF file, whose lines never match Claude Code’s pattern', () => {
    expect(failure('name: a\r\ndescription: Use when: asked\r\n')).toMatchObject({ stage: 'yaml' });
  });

  it('fails where the repair cannot help', () => {
    for (const text of [
      'name: a\ndescription: first line\n  user: hello\ntools: Read',
      'name: a\ndescription: wrapped\nonto column zero\ntools: Read',
      'name: a\ndescription: "first\nsecond"\ntools: Read',
      'name: a\ndescription: Examples:',
      'name: a\ndescription: |\n  block\nx: a: b',
    ]) {
      expect(failure(text).stage, text).toBe('yaml');
    }
  });

  it('refuses a frontmatter that is a list or text rather than a mapping', () => {
    expect(failure('- a\n- b')).toMatchObject({ stage: 'not-a-mapping', code: 'not-a-mapping' });
    expect(read('')).toStrictEqual({});
  });
});

describe('parseFrontmatterYaml limits', () => {
  const withAliases = (count: number): string =>
    `name: a\nx: &v [1]\nl: [${Array.from({ length: count }, () => '*v').join(', ')}]`;

  it(`accepts exactly ${MAX_YAML_ALIAS_COUNT} aliases and refuses one more`, () => {
    expect(read(withAliases(MAX_YAML_ALIAS_COUNT)).l).toHaveLength(MAX_YAML_ALIAS_COUNT);
    expect(failure(withAliases(MAX_YAML_ALIAS_COUNT + 1))).toMatchObject({
      stage: 'limit',
      code: 'alias-bomb',
      message: expect.stringContaining(`${MAX_YAML_ALIAS_COUNT + 1} aliases`),
    });
  });

  it('refuses an alias bomb that stays under the alias count', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 8; level++) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      levels.push(
        `${name}: &${name} [${Array.from({ length: 10 }, () => `*${previous}`).join(', ')}]`,
      );
    }
    expect(failure(`name: x\n${levels.join('\n')}`)).toMatchObject({
      stage: 'limit',
      code: 'alias-bomb',
    });
  });

  it('counts the aliases the parser meets, also where the line scan is misled', () => {
    const keys = Array.from(
      { length: 3 },
      (_, key) => `  ? [k${key}, ${'*a, '.repeat(40)}*a]\n  : 0`,
    );
    const tricks = [
      "description: it 's plain text", // an apostrophe inside a plain value
      'note: x # a comment that ends like a block scalar >', // a `>` inside a comment
    ];
    for (const trick of tricks) {
      const found = failure(`name: a\n${trick}\na: &a some text\nx:\n${keys.join('\n')}`);
      expect(found).toMatchObject({ stage: 'limit', code: 'alias-bomb' });
      expect(found.message).toMatch(/aliases \(\*name\)/);
    }
  });

  it('counts aliases while parsing, so a text the line scan would miscount is still refused', () => {
    // parseFullYaml is what runs after the scan; here it meets the aliases on its own.
    const keys = Array.from(
      { length: 3 },
      (_, key) => `  ? [k${key}, ${'*a, '.repeat(40)}*a]\n  : 0`,
    );
    const found = parseFullYaml(`a: &a text\nx:\n${keys.join('\n')}`, 'error');
    expect(found).toMatchObject({
      ok: false,
      failure: {
        code: 'alias-bomb',
        message: expect.stringContaining(`more than ${MAX_YAML_ALIAS_COUNT} aliases`),
      },
    });
  });

  it('refuses aliases of long text used in mapping keys before the parser joins them', () => {
    // Each key is a list of 20 aliases of 60,000 characters: 1.2 million once joined.
    const text = `name: a\na: &a ${'x'.repeat(60_000)}\nx:\n  ? [${'*a, '.repeat(19)}*a]\n  : 0`;
    const found = failure(text);
    expect(found).toMatchObject({ stage: 'limit', code: 'alias-bomb' });
    expect(found.message).toContain(`more than ${MAX_YAML_ALIAS_CHARACTERS} characters`);
  });

  it('reads a few aliases of long text as YAML does', () => {
    const record = read(`name: a\nx: &x ${'y'.repeat(50_000)}\nl: [*x, *x]`);
    expect(record.l).toStrictEqual(['y'.repeat(50_000), 'y'.repeat(50_000)]);
  });

  it('reports a self-referencing alias in words, not as a stack overflow', () => {
    for (const text of ['name: a\nself: &s [*s]', 'name: a\nhooks: &h\n  Stop: *h']) {
      const found = failure(text);
      expect(found).toMatchObject({ stage: 'limit', code: 'self-referencing-alias' });
      expect(found.message).toContain('self-referencing alias');
    }
  });

  it('refuses !!binary values', () => {
    expect(failure('name: a\ndescription: !!binary aGVsbG8=')).toMatchObject({
      stage: 'limit',
      code: 'binary',
    });
  });

  it(`refuses nesting deeper than ${MAX_FRONTMATTER_DEPTH} levels and frontmatter over ${MAX_FRONTMATTER_LENGTH} characters`, () => {
    const deep = `name: a\nx: ${'['.repeat(MAX_FRONTMATTER_DEPTH + 5)}${']'.repeat(MAX_FRONTMATTER_DEPTH + 5)}`;
    expect(failure(deep)).toMatchObject({ stage: 'limit', code: 'too-deep', line: 2 });
    const mappings = `name: a\nx: ${'{a: '.repeat(MAX_FRONTMATTER_DEPTH + 5)}1${'}'.repeat(MAX_FRONTMATTER_DEPTH + 5)}`;
    expect(failure(mappings)).toMatchObject({ stage: 'limit', code: 'too-deep' });
    const indented = Array.from(
      { length: MAX_FRONTMATTER_DEPTH + 5 },
      (_, level) => `${' '.repeat(level)}k${level}:`,
    ).join('\n');
    expect(failure(indented)).toMatchObject({ stage: 'limit', code: 'too-deep' });
    expect(failure(`name: a\ndescription: ${'x'.repeat(MAX_FRONTMATTER_LENGTH)}`)).toMatchObject({
      stage: 'limit',
      code: 'too-long',
    });
  });

  it('reads a description of hundreds of <example> blocks (over 64k characters), as Claude Code does', () => {
    const examples = Array.from(
      { length: 500 },
      (_, index) =>
        `  <example>\n  Context: case ${index} of a long list of cases the agent handles.\n  user: "Please handle case ${index} for me now"\n  assistant: "I will use the agent for case ${index}."\n  </example>`,
    ).join('\n');
    const record = read(`name: a\ndescription: |\n${examples}\ntools: Read`);
    expect(String(record['description']).length).toBeGreaterThan(65_536);
    expect(record['tools']).toBe('Read');
  });

  it('keeps a __proto__ key as plain data, never as the prototype', () => {
    const record = read('name: a\n__proto__:\n  polluted: true');
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
