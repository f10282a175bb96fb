import { describe, expect, it } from 'vitest';
import { isStoreUnavailable } from './store-unavailable.js';

describe('isStoreUnavailable', () => {
  it('is true for a store out of reach: sockets, connection SQLSTATEs, node-postgres messages, causes', () => {
    const reachable = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
      }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('query failed', { cause: Object.assign(new Error('x'), { code: 'EPIPE' }) }),
      new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })], 'all failed'),
    ];
    expect(reachable.map((error) => isStoreUnavailable(error))).toEqual(reachable.map(() => true));
  });

  it('is false for a write the store refused, and for what is not an error', () => {
    const refused = [
      Object.assign(new Error('duplicate key value'), { code: '23505' }),
      Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' }),
      Object.assign(new Error('UNIQUE constraint failed'), {
        code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
      }),
      new Error('disk full'),
      'ECONNREFUSED',
      null,
    ];
    expect(refused.map((error) => isStoreUnavailable(error))).toEqual(refused.map(() => false));
  });

  it('stops following a cycle of causes', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isStoreUnavailable(a)).toBe(false);
  });
});
