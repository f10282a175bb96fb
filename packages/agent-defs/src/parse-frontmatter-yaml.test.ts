import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseFrontmatterYaml } from './parse-frontmatter-yaml.js';

function recordOf(text: string) {
  const result = parseFrontmatterYaml(text);
  if (!result.ok) throw new Error(`expected a mapping, got: ${result.reason}`);
  return result;
}

describe('parseFrontmatterYaml', () => {
  it('folds a plain value whose indented lines hold "key: value" text, as YAML folds plain lines', () => {
    const result = recordOf(
      'name: a\ndescription: Finds slow queries.\n\n  Example:\n  user: "why is /orders slow?"\n  assistant: "checking"\ntools: Read\n',
    );
    expect(result.record).toEqual({
      name: 'a',
      description:
        'Finds slow queries.\nExample: user: "why is /orders slow?" assistant: "checking"',
      tools: 'Read',
    });
    expect(result.repairedAt?.line).toBe(2);
    expect(result.repairedAt?.message).toMatch(/continues over lines that contain ': '/);
    // Blank lines stand in for the folded ones, so later keys keep their lines.
    expect(result.keyLines.get('tools')).toBe(7);
  });

  it('joins a plain value that a formatter wrapped onto an unindented line', () => {
    const result = recordOf(
      'name: a\ndescription: Checks contrast,\nlabels and focus order\nmodel: haiku',
    );
    expect(result.record.description).toBe('Checks contrast, labels and focus order');
    expect(result.record.model).toBe('haiku');
    expect(result.repairedAt?.message).toMatch(/unindented line/);
  });

  it('quotes a value that starts with Markdown bold or code', () => {
    expect(recordOf('name: a\ndescription: **Planner**: splits work').record.description).toBe(
      '**Planner**: splits work',
    );
    expect(recordOf('name: a\ndescription: `make` expert').record.description).toBe(
      '`make` expert',
    );
  });

  it('keeps a lone alias as an alias', () => {
    const result = recordOf('base: &text Shared words\nname: a\ndescription: *text');
    expect(result.record.description).toBe('Shared words');
    expect(result.repairedAt).toBeUndefined();
  });

  it('indents the unindented lines of a quoted value', () => {
    const result = recordOf(
      'name: a\ndescription: "First line.\n\nuser: \\"hi\\"\nassistant: \\"hello\\""\nmodel: sonnet',
    );
    expect(result.record).toEqual({
      name: 'a',
      description: 'First line.\nuser: "hi" assistant: "hello"',
      model: 'sonnet',
    });
    expect(result.repairedAt?.message).toMatch(/quoted value of `description`/);
    expect(result.repairedAt?.advice).toMatch(/indent/);
  });

  it('still reports a quoted value that never closes', () => {
    const result = parseFrontmatterYaml('name: a\ndescription: "never closed\nmodel: sonnet');
    expect(result.ok).toBe(false);
  });

  it('does not touch a plain value continued on indented lines that YAML already accepts', () => {
    const result = recordOf('name: a\ndescription: one\n  two\n  three\ntools: Read');
    expect(result.record.description).toBe('one two three');
    expect(result.repairedAt).toBeUndefined();
  });

  it('reads any valid YAML mapping exactly as YAML does, without repairs', () => {
    const key = fc.stringMatching(/^[a-z][a-zA-Z_-]{0,10}$/);
    const text = fc.string({ maxLength: 60 });
    const value = fc.oneof(
      text,
      fc.array(text, { maxLength: 4 }),
      fc.integer(),
      fc.boolean(),
      fc.dictionary(key, text, { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(fc.dictionary(key, value, { minKeys: 1, maxKeys: 6 }), (record) => {
        for (const lineWidth of [0, 20]) {
          const result = parseFrontmatterYaml(stringify(record, { lineWidth }));
          expect(result.ok).toBe(true);
          if (!result.ok) return;
          expect(result.record).toEqual(record);
          expect(result.repairedAt).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseFrontmatterYaml on hostile input', () => {
  // Each case is close to the 1 MiB file limit. Before the scans were made linear, the first
  // took minutes and the second over ten seconds, so the per-test timeout catches a regression.
  it(
    'reads a frontmatter of 100 000 quoted values, closed or not, in one pass',
    { timeout: 15_000 },
    () => {
      const closed = Array.from({ length: 100_000 }, (_, index) => `k${index}: 'x'`).join('\n');
      expect(recordOf(closed).record.k99999).toBe('x');
      const unclosed = Array.from({ length: 100_000 }, (_, index) => `k${index}: "x`).join('\n');
      const result = parseFrontmatterYaml(unclosed);
      expect(result.ok).toBe(false);
    },
  );

  it(
    'reads 100 000 distinct keys without comparing each with every other',
    { timeout: 15_000 },
    () => {
      const text = Array.from({ length: 100_000 }, (_, index) => `k${index}: v`).join('\n');
      expect(Object.keys(recordOf(text).record)).toHaveLength(100_000);
    },
  );

  it('still refuses a key repeated in a nested mapping, with its line', () => {
    const result = parseFrontmatterYaml('name: a\nhooks:\n  Stop: 1\n  Stop: 2\n');
    expect(result).toMatchObject({ ok: false, line: 4, reason: expect.stringMatching(/unique/) });
  });

  it('keeps a __proto__ key as plain data, never as the prototype', () => {
    const { record } = recordOf('name: a\n__proto__:\n  tools: "*"\n');
    expect(record.tools).toBeUndefined();
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
  });

  it('refuses frontmatter nested too deeply instead of crashing', () => {
    const result = parseFrontmatterYaml(`x: ${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    expect(result.ok).toBe(false);
  });
});
