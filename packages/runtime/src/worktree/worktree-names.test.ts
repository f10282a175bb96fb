import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { agentWorktreeSlug, toPathSafeName } from './worktree-names.js';

const HOSTILE = [
  '../../etc',
  '--upload-pack=evil',
  '-b',
  'team/reviewer',
  'team\\reviewer',
  'a b',
  'Foo',
  'foo',
  '.hidden',
  'x..y',
  'refs@{1}',
  'name.lock',
  'tilde~1',
  'caret^2',
  'co:lon',
  'quest?ion',
  'st*r',
  '[bracket',
  'über-agent',
  '🤖',
  '\u0000nul',
  'x'.repeat(300),
  'x'.repeat(299) + 'y',
];

function isValidBranch(name: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('toPathSafeName', () => {
  it('keeps plain names readable and encodes everything else', () => {
    expect(toPathSafeName('code-reviewer')).toBe('code-reviewer');
    expect(toPathSafeName('team/reviewer')).toBe('team%2Freviewer');
    expect(toPathSafeName('../x')).toBe('%2E%2E%2Fx');
    expect(toPathSafeName('Foo')).toBe('%46oo');
  });

  it('gives different names different pieces (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        (a, b) => {
          fc.pre(a !== b);
          expect(toPathSafeName(a)).not.toBe(toPathSafeName(b));
        },
      ),
      { numRuns: 2_000 },
    );
    const long = HOSTILE.filter((name) => name.length >= 299);
    expect(toPathSafeName(long[0]!)).not.toBe(toPathSafeName(long[1]!));
  });

  it('only ever uses characters that are safe in a path segment and a ref (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (name) => {
        const piece = toPathSafeName(name);
        // Plain bytes and whole %XX escapes only (a cut never splits an escape).
        expect(piece).toMatch(/^(?:[a-z0-9_+-]|%[0-9A-F]{2})*$/);
        expect(piece.length).toBeLessThanOrEqual(48);
      }),
    );
  });
});

describe('agentWorktreeSlug', () => {
  it('turns hostile agent types into valid branch names that can never be a git option', () => {
    for (const agentType of HOSTILE) {
      const slug = agentWorktreeSlug({ agentType, agentId: 'a0123456789abcdef' });
      expect(slug.startsWith('agent-')).toBe(true);
      expect(slug).not.toContain('/');
      expect(slug).not.toContain('..');
      expect(isValidBranch(`delegate/${slug}`)).toBe(true);
    }
  });
});
