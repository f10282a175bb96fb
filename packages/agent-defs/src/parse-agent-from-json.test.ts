import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAgentFromJson } from './parse-agent-from-json.js';
import { KNOWN_AGENT_KEYS } from './normalize-agent-fields.js';

describe('parseAgentFromJson', () => {
  it('reads an --agents entry: description, prompt and the same fields as Markdown', () => {
    const result = parseAgentFromJson(
      'reviewer',
      {
        description: 'Reviews diffs.',
        prompt: '  You review diffs.  ',
        tools: ['Read', 'Grep'],
        model: 'Opus',
        maxTurns: 12,
        color: 'green',
      },
      'flagSettings',
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.agent).toMatchObject({
      agentType: 'reviewer',
      whenToUse: 'Reviews diffs.',
      tools: ['Read', 'Grep'],
      model: 'opus',
      maxTurns: 12,
      color: 'green',
      source: 'flagSettings',
      baseDir: '--agents',
    });
    expect(result.agent.getSystemPrompt()).toBe('You review diffs.');
    expect(result.warnings).toEqual([]);
  });

  it('accepts tools as a comma string and notes unknown keys', () => {
    const result = parseAgentFromJson(
      'a',
      { description: 'd', prompt: 'p', tools: 'Read, Bash(git add, git commit)', extra: 1 },
      'flagSettings',
    );
    expect(result.ok && result.agent.tools).toEqual(['Read', 'Bash(git add, git commit)']);
    expect(result.ok && result.warnings).toEqual([
      expect.objectContaining({
        severity: 'info',
        filePath: '--agents',
        reason: 'unknown key `extra` was ignored',
      }),
    ]);
  });

  it('refuses entries without a description or prompt, with the agent named', () => {
    const noPrompt = parseAgentFromJson('a', { description: 'd' }, 'flagSettings');
    expect(noPrompt).toEqual({
      ok: false,
      diagnostic: expect.objectContaining({
        severity: 'error',
        agentType: 'a',
        reason: expect.stringMatching(/needs a "prompt"/),
      }),
    });
    const noDescription = parseAgentFromJson('a', { prompt: 'p' }, 'flagSettings');
    expect(noDescription.ok || noDescription.diagnostic.reason).toMatch(/needs a "description"/);
    // Blank text is no description or prompt either (the README says so).
    for (const value of [
      { description: '  ', prompt: 'p' },
      { description: 'd', prompt: '\n' },
    ]) {
      const blank = parseAgentFromJson('a', value, 'flagSettings');
      expect(blank.ok || blank.diagnostic.severity).toBe('error');
    }
  });

  it('refuses values that are not objects and names Claude Code or Delegate refuses', () => {
    for (const value of [null, 'text', 3, [], true]) {
      expect(parseAgentFromJson('a', value, 'flagSettings').ok).toBe(false);
    }
    for (const name of ['-up', 'a:b', '', 'x\ny', 'x\u200by']) {
      const result = parseAgentFromJson(name, { description: 'd', prompt: 'p' }, 'flagSettings');
      expect(result.ok).toBe(false);
    }
  });

  it('drops bad fields like the Markdown parser', () => {
    const dropped = parseAgentFromJson(
      'a',
      { description: 'd', prompt: 'p', memory: 'everywhere' },
      'flagSettings',
    );
    expect(dropped.ok && dropped.agent.memory).toBeUndefined();
    expect(dropped.ok && dropped.warnings[0]?.severity).toBe('warning');
    const unknownMode = parseAgentFromJson(
      'a',
      { description: 'd', prompt: 'p', permissionMode: 'yolo' },
      'flagSettings',
    );
    expect(unknownMode.ok && unknownMode.agent.permissionMode).toBeUndefined();
    const badHooks = parseAgentFromJson(
      'a',
      { description: 'd', prompt: 'p', hooks: { Stop: 'x' } },
      'flagSettings',
    );
    expect(badHooks.ok).toBe(false);
  });

  it('never throws, for any JSON value and any name', () => {
    fc.assert(
      fc.property(fc.string(), fc.jsonValue(), (name, value) => {
        const result = parseAgentFromJson(name, value, 'flagSettings');
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('never throws for objects shaped like definitions with values of any JSON type', () => {
    const keys = fc.constantFrom(
      ...KNOWN_AGENT_KEYS.filter((key) => key !== 'name'),
      'prompt',
      '__proto__',
    );
    fc.assert(
      fc.property(fc.dictionary(keys, fc.jsonValue()), (value) => {
        const result = parseAgentFromJson(
          'agent',
          { description: 'd', prompt: 'p', ...value },
          'flagSettings',
        );
        if (result.ok) expect(result.agent.agentType).toBe('agent');
        else expect(result.diagnostic.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseAgentFromJson on hostile --agents JSON', () => {
  it('refuses an agent named __proto__ and keeps prototype keys out of hooks', () => {
    const flag = JSON.parse(
      '{"__proto__":{"description":"d","prompt":"p"},"ok":{"description":"d","prompt":"p","hooks":{"__proto__":{"polluted":1},"Stop":[]}}}',
    ) as Record<string, unknown>;
    expect(parseAgentFromJson('__proto__', flag.__proto__, 'flagSettings')).toMatchObject({
      ok: false,
      diagnostic: { reason: expect.stringMatching(/is reserved/) },
    });
    const result = parseAgentFromJson('ok', flag.ok, 'flagSettings');
    if (!result.ok) throw new Error(result.diagnostic.reason);
    expect(Object.keys(result.agent.hooks ?? {})).toEqual(['Stop']);
    expect(result.warnings).toEqual([
      expect.objectContaining({ severity: 'warning', reason: expect.stringMatching(/__proto__/) }),
    ]);
  });
});

describe('diagnostics for long names', () => {
  it('quote at most 40 characters of a bad name', () => {
    const name = `bad/${'x'.repeat(5000)}`;
    const result = parseAgentFromJson(name, { description: 'd', prompt: 'p' }, 'flagSettings');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostic.reason.length).toBeLessThan(200);
  });
});
