import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactDeep } from './redact-deep.js';
import { secretRedactor } from './redact-secrets.js';

const SECRET = 'sk-ant-deep-secret-42';
const redact = secretRedactor([SECRET])!;

describe('redactDeep', () => {
  it('replaces a secret in strings and keys at any depth, copying only the path to it', () => {
    const untouched = { text: 'nothing here', list: [1, 'two'] };
    const value = {
      type: 'agent.message',
      untouched,
      message: { content: [{ type: 'tool_use', input: { command: `echo ${SECRET}` } }] },
      [`key ${SECRET}`]: true,
    };
    const redacted = redactDeep(value, redact);
    expect(redacted).toEqual({
      type: 'agent.message',
      untouched,
      message: { content: [{ type: 'tool_use', input: { command: 'echo [REDACTED]' } }] },
      'key [REDACTED]': true,
    });
    expect(redacted.untouched).toBe(untouched);
    // The value given is never changed: it is still someone's conversation.
    expect(value.message.content[0]!.input.command).toBe(`echo ${SECRET}`);
  });

  it('returns the very value given when it holds no secret', () => {
    const value = { a: [{ b: 'text', c: null, d: 3 }], e: 'more' };
    expect(redactDeep(value, redact)).toBe(value);
    expect(redactDeep('plain', redact)).toBe('plain');
    expect(redactDeep(undefined, redact)).toBeUndefined();
  });

  it('keeps a __proto__ key a key, leaves class instances alone and ends at a cycle', () => {
    const parsed = JSON.parse(`{"__proto__": "${SECRET}", "ok": 1}`) as Record<string, unknown>;
    const redacted = redactDeep(parsed, redact);
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(redacted, '__proto__')?.value).toBe('[REDACTED]');
    const date = new Date(0);
    expect(redactDeep({ date }, redact).date).toBe(date);
    const cyclic: Record<string, unknown> = { text: SECRET };
    cyclic['self'] = cyclic;
    const copy = redactDeep(cyclic, redact);
    expect(copy['text']).toBe('[REDACTED]');
  });

  it('replaces an Error whose message holds a secret, and leaves out what is nested too deep to check', () => {
    const error = new TypeError(`rejected ${SECRET}`);
    const redacted = redactDeep({ error }, redact).error;
    expect(redacted).toBeInstanceOf(Error);
    expect(redacted).toMatchObject({ name: 'TypeError', message: 'rejected [REDACTED]' });
    const harmless = new Error('nothing here');
    expect(redactDeep({ harmless }, redact).harmless).toBe(harmless);
    // 10,000 levels would overflow a recursive walk: the deep part is left out instead.
    let deep: unknown = SECRET;
    for (let level = 0; level < 10_000; level++) deep = { next: deep };
    const shown = JSON.stringify(redactDeep(deep, redact));
    expect(shown).toContain('[left out]');
    expect(shown).not.toContain(SECRET);
  });

  it('leaves no secret in plain data, returns it unchanged without one, and never modifies it', () => {
    const withSecret = fc.oneof(
      fc.string(),
      fc.string().map((text) => `${text}${SECRET}${text}`),
    );
    const data = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        withSecret,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value')),
        fc.dictionary(withSecret, tie('value')),
      ),
    })).value;
    fc.assert(
      fc.property(data, (value) => {
        const before = JSON.stringify(value);
        const redacted = redactDeep(value, redact);
        expect(JSON.stringify(value)).toBe(before);
        expect(JSON.stringify(redacted) ?? '').not.toContain(SECRET);
        if (!before.includes(SECRET)) expect(redacted).toBe(value);
      }),
    );
  });
});
