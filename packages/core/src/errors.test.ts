import { describe, expect, it } from 'vitest';
import { DelegateError, errorMessage, isAbortError } from './errors.js';

describe('DelegateError', () => {
  it('carries code, message, cause and details', () => {
    const cause = new Error('disk full');
    const error = new DelegateError('PATH_ESCAPE', 'Path /etc/passwd is outside /repo', {
      cause,
      details: { path: '/etc/passwd' },
    });
    expect(error.code).toBe('PATH_ESCAPE');
    expect(error.message).toContain('/etc/passwd');
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ path: '/etc/passwd' });
    expect(error).toBeInstanceOf(Error);
  });

  it('recognises instances from another copy of the package by the global marker', () => {
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('delegate.error')]: true,
      code: 'ABORTED',
    });
    expect(DelegateError.isInstance(foreign)).toBe(true);
    expect(DelegateError.isInstance(new Error('plain'))).toBe(false);
    expect(DelegateError.isInstance(null)).toBe(false);
    expect(DelegateError.isInstance('DelegateError')).toBe(false);
  });

  it('checks codes', () => {
    const error = new DelegateError('MAX_TURNS', 'Reached 3 turns');
    expect(DelegateError.hasCode(error, 'MAX_TURNS')).toBe(true);
    expect(DelegateError.hasCode(error, 'ABORTED')).toBe(false);
  });
});

describe('errorMessage and isAbortError', () => {
  it('turns any thrown value into text', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage({ a: 1 })).toBe('{"a":1}');
  });

  it('recognises aborts', () => {
    const abort = new Error('aborted');
    abort.name = 'AbortError';
    expect(isAbortError(abort)).toBe(true);
    expect(isAbortError(new DelegateError('ABORTED', 'stopped'))).toBe(true);
    expect(isAbortError(new Error('other'))).toBe(false);
  });
});
