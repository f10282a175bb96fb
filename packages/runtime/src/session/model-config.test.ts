import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import {
  MODEL_ALIASES,
  createApiClient,
  resolveAgentModel,
  resolveModelAlias,
} from './model-config.js';

describe('model configuration', () => {
  it('turns aliases into model ids and leaves ids alone', () => {
    expect(resolveModelAlias('sonnet')).toBe(MODEL_ALIASES['sonnet']);
    expect(resolveModelAlias(' Opus ')).toBe(MODEL_ALIASES['opus']);
    expect(resolveModelAlias('claude-custom-1')).toBe('claude-custom-1');
  });

  it('sends the alias fable as claude-fable-5-2, as Claude Code does', () => {
    expect(resolveModelAlias('fable')).toBe('claude-fable-5-2');
    expect(resolveModelAlias(' Fable ')).toBe('claude-fable-5-2');
    expect(resolveAgentModel({ parentModel: 'claude-parent', definitionModel: 'fable' })).toBe(
      'claude-fable-5-2',
    );
  });

  it('picks a sub-agent model: fork inherits, then call, then definition, then default', () => {
    const parentModel = 'claude-parent';
    expect(resolveAgentModel({ parentModel, callModel: 'haiku', isFork: true })).toBe(parentModel);
    expect(resolveAgentModel({ parentModel, callModel: 'haiku', definitionModel: 'opus' })).toBe(
      MODEL_ALIASES['haiku'],
    );
    expect(resolveAgentModel({ parentModel, definitionModel: 'opus' })).toBe(MODEL_ALIASES['opus']);
    expect(resolveAgentModel({ parentModel, definitionModel: 'inherit' })).toBe(parentModel);
    expect(resolveAgentModel({ parentModel, defaultSubagentModel: 'haiku' })).toBe(
      MODEL_ALIASES['haiku'],
    );
    expect(resolveAgentModel({ parentModel })).toBe(MODEL_ALIASES['sonnet']);
  });

  it('reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, and explains a missing key', () => {
    const client = createApiClient({
      env: { ANTHROPIC_API_KEY: 'from-env', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(client.apiKey).toBe('from-env');
    expect(client.baseURL).toBe('http://127.0.0.1:9');
    expect(() => createApiClient({ env: {} })).toThrow(/ANTHROPIC_API_KEY/);
    try {
      createApiClient({ env: {} });
    } catch (error) {
      expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    }
  });

  it.each([
    ['not a URL', 'gateway.internal:8080'],
    ['a URL with a space in the host', 'http://user:sekret-token@bad host/'],
    ['not http(s)', 'ftp://user:sekret-token@files.example'],
    // Parses with `sekret:` as its scheme: the scheme must not be repeated either.
    ['credentials without a scheme', 'sekret:token@gateway.example'],
    // fetch refuses to send to such a URL: every request would fail with a connection error.
    ['with a user name and password', 'https://user:sekret-token@gateway.example'],
    ['with a user name only', 'http://sekret-user@127.0.0.1:8787'],
  ])('refuses an ANTHROPIC_BASE_URL that is %s at once, without printing it', (_case, value) => {
    let error: unknown;
    try {
      createApiClient({ env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: value } });
    } catch (thrown) {
      error = thrown;
    }
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(
      /^ANTHROPIC_BASE_URL (is not a valid URL|must be an http|holds a user name or password)/,
    );
    expect((error as Error).message).not.toContain('sekret');
    expect(() => createApiClient({ apiKey: 'k', baseURL: value })).toThrow(/^options\.baseURL /);
  });

  it('refuses a bad ANTHROPIC_BASE_URL when a session is created, not at its first request', async () => {
    const { DelegateSession } = await import('./session.js');
    await expect(
      DelegateSession.create({
        cwd: process.cwd(),
        transcriptDir: false,
        env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'https://user:sekret@ bad' },
      }),
    ).rejects.toThrow(/^ANTHROPIC_BASE_URL is not a valid URL/);
  });
});
