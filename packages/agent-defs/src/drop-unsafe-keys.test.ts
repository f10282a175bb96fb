import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dropUnsafeKeys } from './drop-unsafe-keys.js';

describe('dropUnsafeKeys', () => {
  it('leaves out __proto__, constructor and prototype at any depth', () => {
    const value = JSON.parse(
      '{"Stop":[{"__proto__":{"polluted":true},"hooks":[{"constructor":{"prototype":{"x":1}},"command":"ok"}]}]}',
    ) as unknown;
    const { value: safe, dropped } = dropUnsafeKeys(value);
    expect(dropped).toBe(2);
    expect(safe).toEqual({ Stop: [{ hooks: [{ command: 'ok' }] }] });
    // Merging the result the careless way no longer changes any prototype.
    const merged = Object.assign({}, ...((safe as { Stop: object[] }).Stop ?? []));
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps every JSON value without unsafe keys as it is', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!/"(__proto__|constructor|prototype)"/.test(text));
        const { value: safe, dropped } = dropUnsafeKeys(value);
        expect(dropped).toBe(0);
        expect(JSON.stringify(safe)).toBe(text);
      }),
    );
  });
});
