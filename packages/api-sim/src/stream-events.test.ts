import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitJson, splitText } from './stream-events.js';

describe('splitText and splitJson', () => {
  it('split without losing or reordering characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        expect(splitText(text).join('')).toBe(text);
        expect(splitJson(text).join('')).toBe(text);
      }),
    );
  });

  it('split JSON of three or more characters into at least three pieces', () => {
    fc.assert(
      fc.property(fc.json(), (json) => {
        fc.pre(Array.from(json).length >= 3);
        expect(splitJson(json).length).toBeGreaterThanOrEqual(3);
      }),
    );
  });
});
