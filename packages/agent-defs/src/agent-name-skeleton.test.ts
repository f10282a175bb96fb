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
    // Characters that show nothing (validateAgentName accepts these): Hangul fillers, a
    // Mongolian vowel separator's relatives, an invisible operator.
    for (const hidden of ['\u3164', '\u115f', '\uffa0', '\u2065', '\u180b'])
      expect(agentNameSkeleton(`Expl${hidden}ore`), hidden.codePointAt(0)!.toString(16)).toBe(
        explore,
      );
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
