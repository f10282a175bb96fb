import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { cloneContentReplacementState } from './clone-content-replacement-state.js';

describe('cloneContentReplacementState', () => {
  it('copies every decision into collections the original does not see', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { maxLength: 20 }), (ids) => {
        const original = {
          seenIds: new Set(ids),
          replacements: new Map(ids.map((id) => [id, `short ${id}`] as const)),
        };
        const copy = cloneContentReplacementState(original);
        expect(copy).toEqual(original);
        // Longer than every existing id, so surely new.
        const added = `${ids.join('')}#new`;
        copy.seenIds.add(added);
        copy.replacements.set(added, 'x');
        expect(original.seenIds.has(added)).toBe(false);
        expect(original.replacements.has(added)).toBe(false);
        expect(original.seenIds.size).toBe(ids.length);
      }),
    );
  });
});
