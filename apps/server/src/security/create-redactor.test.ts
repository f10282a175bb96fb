import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, createRedactor } from './create-redactor.js';

describe('createRedactor', () => {
  const key = 'sk-ant-0123456789abcdef';
  const token = 'dst_ffffeeeeddddcccc';

  it('replaces every secret in nested strings and keys', () => {
    const redact = createRedactor([key, token, undefined]);
    const value = {
      text: `key=${key} and again ${key}`,
      list: [`Bearer ${token}`, 3, null, true],
      [key]: { deep: token },
    };
    expect(redact(value)).toEqual({
      text: `key=${REDACTED} and again ${REDACTED}`,
      list: [`Bearer ${REDACTED}`, 3, null, true],
      [REDACTED]: { deep: REDACTED },
    });
    expect(value.text).toContain(key);
  });

  it('leaves short placeholders alone', () => {
    const redact = createRedactor(['sim']);
    expect(redact({ text: 'simple' })).toEqual({ text: 'simple' });
  });

  it('never leaves a secret in the output, whatever surrounds it', () => {
    const redact = createRedactor([key]);
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constant(key))), (parts) => {
        const output = redact({ text: parts.join('') });
        expect(output.text.includes(key)).toBe(false);
      }),
    );
  });
});
