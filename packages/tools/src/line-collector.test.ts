import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLineCollector } from './line-collector.js';
import { splitLines } from './split-lines.js';

/** Feeds `pieces` to a collector and returns what it kept. */
function collect(options: {
  pieces: readonly string[];
  offset: number;
  limit: number;
  keep: number;
}) {
  const collector = createLineCollector(options);
  for (const piece of options.pieces) collector.add(piece);
  return collector.finish();
}

describe('createLineCollector', () => {
  it('keeps the selected lines, cut to the kept length, with their full lengths', () => {
    const result = collect({
      pieces: ['alpha\r\nbe', 'ta is long', 'er\ngam', 'ma'],
      offset: 2,
      limit: 2,
      keep: 4,
    });
    expect(result).toEqual({
      lines: ['beta', 'gamm'],
      lineLengths: [14, 5],
      totalLines: 3,
    });
  });

  it('does not count a final line ending as the start of another line', () => {
    expect(collect({ pieces: ['a\n', 'b\r\n'], offset: 1, limit: 5, keep: 10 })).toEqual({
      lines: ['a', 'b'],
      lineLengths: [1, 1],
      totalLines: 2,
    });
    expect(collect({ pieces: [''], offset: 1, limit: 5, keep: 10 }).totalLines).toBe(0);
  });

  it('gives the lines splitLines gives, however the text is cut into pieces', () => {
    const text = fc
      .array(fc.constantFrom('a', 'é', '\n', '\r', '\r\n', 'xyz', '😀'), { maxLength: 40 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 8 }),
        (whole, cuts, offset, limit, keep) => {
          const points = [...new Set(cuts.map((cut) => cut % (whole.length + 1)))].sort(
            (a, b) => a - b,
          );
          const pieces = [0, ...points].map((start, index) =>
            whole.slice(start, [...points, whole.length][index]),
          );
          const expected = splitLines(whole).slice(offset - 1, offset - 1 + limit);
          expect(collect({ pieces, offset, limit, keep })).toEqual({
            lines: expected.map((line) => line.slice(0, keep)),
            lineLengths: expected.map((line) => line.length),
            totalLines: splitLines(whole).length,
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});
