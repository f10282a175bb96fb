import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentNameSkeleton } from './agent-name-skeleton.js';

describe('agentNameSkeleton', () => {
  it('gives lookalike names the same skeleton', () => {
    const explore = agentNameSkeleton('Explore');
    expect(agentNameSkeleton('explore')).toBe(explore); // case
    expect(agentNameSkeleton('Explоre')).toBe(explore); // Cyrillic о
    expect(agentNameSkeleton('Ｅｘｐｌｏｒｅ')).toBe(explore); // full-width
    expect(agentNameSkeleton('Explöre')).toBe(explore); // accent
    expect(agentNameSkeleton('Expl0re')).toBe(explore); // digit zero
    expect(agentNameSkeleton('code_reviewer')).toBe(agentNameSkeleton('code-reviewer'));
  });

  it('keeps names a reader tells apart apart', () => {
    expect(agentNameSkeleton('Plan')).not.toBe(agentNameSkeleton('Plans'));
    expect(agentNameSkeleton('reviewer')).not.toBe(agentNameSkeleton('reviewers'));
  });

  it('is unchanged by a second pass and ignores letter case', () => {
    fc.assert(
      fc.property(fc.string(), (name) => {
        const skeleton = agentNameSkeleton(name);
        expect(agentNameSkeleton(skeleton)).toBe(skeleton);
        expect(agentNameSkeleton(name.toUpperCase())).toBe(agentNameSkeleton(name.toLowerCase()));
      }),
    );
  });
});
