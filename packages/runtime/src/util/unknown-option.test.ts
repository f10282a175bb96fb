import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closestKey, unknownOptionProblem } from './unknown-option.js';

const THINKING = ['type', 'budgetTokens'];
const PRICE = [
  'inputPerMTok',
  'outputPerMTok',
  'cacheWrite5mPerMTok',
  'cacheWrite1hPerMTok',
  'cacheReadPerMTok',
];

describe('closestKey', () => {
  it('finds the key meant in another case, with _ or -, misspelt or cut short', () => {
    expect(closestKey('budget_tokens', THINKING)).toBe('budgetTokens');
    expect(closestKey('BudgetTokens', THINKING)).toBe('budgetTokens');
    expect(closestKey('inputPerMtok', PRICE)).toBe('inputPerMTok');
    expect(closestKey('outputPerMtoks', PRICE)).toBe('outputPerMTok');
    expect(closestKey('maxTurn', ['maxTurns', 'onEvent'])).toBe('maxTurns');
    expect(closestKey('ruleContnt', ['toolName', 'ruleContent'])).toBe('ruleContent');
    expect(closestKey('tpye', THINKING)).toBe('type');
    expect(closestKey('budget', THINKING)).toBe('budgetTokens');
  });

  it('names none when nothing is close, or a start fits several keys', () => {
    expect(closestKey('colour', THINKING)).toBeUndefined();
    expect(closestKey('cache', PRICE)).toBeUndefined();
    expect(closestKey('x', ['cwd', 'env'])).toBeUndefined();
    expect(closestKey('__', THINKING)).toBeUndefined();
  });

  it('answers a known key or nothing, and a known key for itself', () => {
    const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,15}$/);
    fc.assert(
      fc.property(key, fc.uniqueArray(key, { minLength: 1, maxLength: 8 }), (given, known) => {
        const meant = closestKey(given, known);
        expect(meant === undefined || known.includes(meant)).toBe(true);
        const own = known[0]!;
        expect(closestKey(own, known)!.toLowerCase().replace(/_/g, '')).toBe(
          own.toLowerCase().replace(/_/g, ''),
        );
      }),
    );
  });
});

describe('unknownOptionProblem', () => {
  it('says which key was meant, else lists the keys or names the type that does', () => {
    expect(unknownOptionProblem({ key: 'budget_tokens', known: THINKING })).toBe(
      'is not an option (did you mean budgetTokens?)',
    );
    expect(unknownOptionProblem({ key: 'colour', known: THINKING })).toBe(
      'is not an option (the options here are type, budgetTokens)',
    );
    expect(
      unknownOptionProblem({ key: 'colour', known: PRICE, listedIn: 'DelegateSessionOptions' }),
    ).toBe('is not an option (check the spelling against DelegateSessionOptions)');
  });
});
