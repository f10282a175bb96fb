import { afterEach, describe, expect, it, vi } from 'vitest';
import { rules, startSim } from '@delegate/api-sim';
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

const KEY = 'sk-ant-logged-key-0042';
const SECRET = 'server-token-0042';

/** What `work` writes to stdout and to stderr (neither reaches the terminal meanwhile). */
async function captureStreams(
  work: () => Promise<void>,
): Promise<{ stdout: string; stderr: string }> {
  const written = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    vi.spyOn(process[name], 'write').mockImplementation((chunk: string | Uint8Array) => {
      written[name] += String(chunk);
      return true;
    });
  }
  try {
    await work();
  } finally {
    vi.restoreAllMocks();
  }
  return written;
}

describe('the client logger', () => {
  const savedLevel = process.env['ANTHROPIC_LOG'];
  afterEach(() => {
    if (savedLevel === undefined) delete process.env['ANTHROPIC_LOG'];
    else process.env['ANTHROPIC_LOG'] = savedLevel;
  });

  it('writes every line to stderr with the key and the secrets replaced, in strings, objects and errors', async () => {
    const client = createApiClient({ apiKey: KEY, secrets: [SECRET], env: {} });
    const output = await captureStreams(async () => {
      client.logger.debug(`[log_1] response error for ${KEY}`, {
        body: { error: { type: 'authentication_error', message: `rejected x-api-key ${KEY}` } },
        nested: { [`token ${SECRET}`]: `again ${SECRET}` },
      });
      client.logger.info(`info ${SECRET}`);
      client.logger.warn('a warning', new Error(`boom ${KEY}`));
      client.logger.error('an error', { headers: new Headers({ 'x-echo': KEY }) });
    });
    expect(output.stdout).toBe('');
    expect(output.stderr).toContain('[log_1] response error for [REDACTED]');
    expect(output.stderr).toContain("message: 'rejected x-api-key [REDACTED]'");
    expect(output.stderr).toContain("'token [REDACTED]': 'again [REDACTED]'");
    expect(output.stderr).toContain('info [REDACTED]');
    expect(output.stderr).toContain('a warning Error: boom [REDACTED]');
    expect(output.stderr).toContain("an error { headers: Headers { 'x-echo': '[REDACTED]' } }");
    expect(output.stderr).not.toContain(KEY);
    expect(output.stderr).not.toContain(SECRET);
  });

  it("is a session's client's too, with the session's secrets (a CLI on the simulator passes the real key as one)", async () => {
    const { DelegateSession } = await import('./session.js');
    const session = await DelegateSession.create({
      cwd: process.cwd(),
      apiKey: 'sim',
      baseURL: 'http://127.0.0.1:9',
      secrets: [KEY],
      transcriptDir: false,
      agentDefinitions: { activeAgents: [], allAgents: [] },
    });
    const output = await captureStreams(async () => {
      session.runtime.client.logger.debug(`upstream rejected x-api-key ${KEY}`);
    });
    await session.close();
    expect(output).toEqual({ stdout: '', stderr: 'upstream rejected x-api-key [REDACTED]\n' });
  });

  it('keeps a key an upstream error quotes out of ANTHROPIC_LOG=debug output, which goes to stderr', async () => {
    process.env['ANTHROPIC_LOG'] = 'debug';
    const sim = await startSim({
      policy: rules([], {
        fallback: { fault: { kind: 'api_error', message: `upstream rejected x-api-key ${KEY}` } },
      }),
    });
    try {
      const client = createApiClient({ apiKey: KEY, baseURL: sim.url, maxRetries: 0, env: {} });
      let failure: unknown;
      const output = await captureStreams(async () => {
        failure = await client.messages
          .create({
            model: 'claude-sonnet-5-5',
            max_tokens: 16,
            messages: [{ role: 'user', content: 'hi' }],
          })
          .catch((error: unknown) => error);
      });
      expect(failure).toBeInstanceOf(Error);
      expect(output.stdout).toBe('');
      expect(output.stderr).toMatch(/response error/);
      expect(output.stderr).toContain('upstream rejected x-api-key [REDACTED]');
      expect(output.stderr).not.toContain(KEY);
    } finally {
      await sim.close();
    }
  });
});
