import { delimiter } from 'node:path';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createCommand, readCommandLine } from './read-command-line.js';
import { parseServerConfig } from './server-config.js';

describe('parseServerConfig', () => {
  it('fills defaults: loopback, port 8787, four runs, CORS off', () => {
    const config = parseServerConfig({ sim: 'echo' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8787,
      maxConcurrentRuns: 4,
      corsOrigins: [],
      keepAliveMs: 15_000,
      workspaceRoots: [process.cwd()],
    });
  });

  it('names every bad value by its flag and never echoes a token', () => {
    let message = '';
    try {
      parseServerConfig({
        port: '99999',
        maxConcurrentRuns: 'two',
        host: '',
        token: 'short',
        corsOrigins: ['not a url'],
        sim: 'echo',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/--port: must be at most 65535/);
    expect(message).toMatch(/--max-concurrent-runs: must be a whole number, got "two"/);
    expect(message).toMatch(/--host:/);
    expect(message).toMatch(/DELEGATE_SERVER_TOKEN: must be at least 16 characters/);
    expect(message).toMatch(/--cors-origin\.0:/);
    expect(message).not.toContain('"short"');
  });

  it('refuses an ANTHROPIC_BASE_URL that is not http or https at start, without repeating it', () => {
    for (const baseURL of ['ftp://gateway.example', 'user:SECRET-KEY@gateway.example', 'gateway']) {
      let message = '';
      try {
        parseServerConfig({ apiKey: 'sk-test', baseURL });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/ANTHROPIC_BASE_URL: must be an http:\/\/ or https:\/\/ URL/);
      expect(message).not.toContain(baseURL);
    }
    expect(parseServerConfig({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:4000' }).baseURL).toBe(
      'http://127.0.0.1:4000',
    );
  });

  it('refuses an ANTHROPIC_BASE_URL with a user name or password at start (fetch never sends to one), without repeating it', () => {
    for (const baseURL of [
      'http://user:SECRET-PW@127.0.0.1:4000',
      'https://SECRET-USER@gw.example',
    ]) {
      let message = '';
      try {
        parseServerConfig({ apiKey: 'sk-test', baseURL });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/ANTHROPIC_BASE_URL: holds a user name or password/);
      expect(message).not.toContain('SECRET');
    }
  });

  it('refuses unknown keys and a start with no model to talk to', () => {
    expect(() => parseServerConfig({ sim: 'echo', prot: 1 })).toThrow(/prot/);
    expect(() => parseServerConfig({})).toThrow(/ANTHROPIC_API_KEY.*--sim/);
  });
});

describe('readCommandLine', () => {
  it('reads flags, lets them win over the environment, and takes --sim without a value as echo', () => {
    const input = readCommandLine(
      [
        '--port',
        '9000',
        '--workspace-root',
        '/a',
        '--workspace-root',
        '/b',
        '--sim',
        '--cors-origin',
        'https://x.example',
      ],
      {
        DELEGATE_SERVER_PORT: '1234',
        DELEGATE_SERVER_HOST: '0.0.0.0',
        DELEGATE_SERVER_WORKSPACE_ROOTS: ['/c', '/d'].join(delimiter),
        ANTHROPIC_API_KEY: 'sk-key',
        DELEGATE_SERVER_TOKEN: 'a-token-from-the-environment',
      },
    );
    expect(input).toMatchObject({
      port: '9000',
      host: '0.0.0.0',
      workspaceRoots: ['/a', '/b'],
      sim: 'echo',
      corsOrigins: ['https://x.example'],
      apiKey: 'sk-key',
      token: 'a-token-from-the-environment',
    });
    expect(readCommandLine(['--sim', 'demo', '--sim-pacing', '100,2'], {})).toMatchObject({
      sim: 'demo',
      simPacing: { timeToFirstTokenMs: '100', msPerToken: '2' },
    });
    expect(
      readCommandLine([], { DELEGATE_SERVER_WORKSPACE_ROOTS: ['/c', '/d'].join(delimiter) })
        ?.workspaceRoots,
    ).toEqual(['/c', '/d']);
  });

  it('--help has the flags and defaults of the README configuration table, each default once', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('| Flag '), readme.indexOf('`--sim ./policy.mjs`'));
    const rows = table
      .split('\n')
      .filter((line) => line.startsWith('| `--'))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const options = createCommand().options.filter((option) => option.long !== '--help');
    const help = new Map(options.map((option) => [option.long, option.description]));
    // A flag cell names its flags before any parenthesis: `--health-port <port>` (with `--worker`).
    const readmeFlags = rows.flatMap(([, flag]) =>
      [...(flag ?? '').replace(/\(.*\)/, '').matchAll(/`(--[a-z-]+)/g)].map((m) => m[1]),
    );
    expect(readmeFlags.sort()).toEqual(options.map((option) => option.long).sort());
    for (const [, flag, , fallback] of rows) {
      const long = /`(--[a-z-]+)/.exec(flag ?? '')?.[1] ?? '';
      // A number or a `value` in the Default column is written in the flag's help too.
      const value = /^`?([\w./~-]+)`?$/.exec(fallback ?? '')?.[1];
      if (value !== undefined) expect(help.get(long), long).toContain(value);
    }
    expect(createCommand().helpInformation()).not.toContain('(default: [])');
  });

  it('reads --trust-workspace-agents and DELEGATE_TRUST_WORKSPACE_AGENTS, off by default', () => {
    const trusted = (argv: string[], env: NodeJS.ProcessEnv) =>
      parseServerConfig({ ...readCommandLine(argv, env), sim: 'echo' }).trustWorkspaceAgents;
    expect(trusted([], {})).toBe(false);
    expect(trusted(['--trust-workspace-agents'], {})).toBe(true);
    expect(trusted([], { DELEGATE_TRUST_WORKSPACE_AGENTS: '1' })).toBe(true);
    expect(trusted([], { DELEGATE_TRUST_WORKSPACE_AGENTS: '0' })).toBe(false);
    expect(() => readCommandLine([], { DELEGATE_TRUST_WORKSPACE_AGENTS: 'sure' })).toThrow(
      /DELEGATE_TRUST_WORKSPACE_AGENTS: "sure" is not a switch; use 1 or 0/,
    );
  });

  it('refuses unknown flags with a clear message', () => {
    expect(() => readCommandLine(['--prot', '1'], {})).toThrow(
      /unknown option '--prot'[\s\S]*--help/,
    );
  });
});

describe('scale-out settings', () => {
  const message = (input: unknown): string => {
    try {
      parseServerConfig(input);
    } catch (error) {
      return (error as Error).message;
    }
    return '';
  };

  it('reads the store, the queue and the roles from flags and the environment', () => {
    const fromEnv = readCommandLine(['--worker', '--max-failovers', '2'], {
      DELEGATE_STORE_URL: 'postgres://delegate:secret-pw@db:5432/delegate',
      DELEGATE_QUEUE_URL: 'redis://cache:6379/0',
      DELEGATE_QUEUE_PREFIX: 'team-a',
    });
    expect(parseServerConfig({ ...fromEnv, sim: 'echo' })).toMatchObject({
      role: 'worker',
      store: 'postgres://delegate:secret-pw@db:5432/delegate',
      queue: 'redis://cache:6379/0',
      queuePrefix: 'team-a',
      maxFailovers: 2,
      failoverAfterMs: 30_000,
    });
    const flags = readCommandLine(
      ['--api-only', '--store', 'postgresql://db/x', '--queue', 'redis://cache'],
      { DELEGATE_STORE_URL: 'postgres://ignored/y' },
    );
    expect(flags).toMatchObject({
      role: 'api',
      store: 'postgresql://db/x',
      queue: 'redis://cache',
    });
  });

  it('refuses a worker or an API-only node without a shared queue, and a shared queue without a shared store', () => {
    expect(message({ sim: 'echo', role: 'worker' })).toMatch(
      /--worker\/--api-only: --worker needs a shared queue/,
    );
    expect(message({ sim: 'echo', role: 'api' })).toMatch(/--api-only needs a shared queue/);
    expect(message({ sim: 'echo', queue: 'redis://127.0.0.1' })).toMatch(
      /--store: a shared queue needs a shared store/,
    );
    expect(() => readCommandLine(['--worker', '--api-only'], {})).toThrow(/exclude each other/);
  });

  it("reads a worker's health port from --health-port or DELEGATE_SERVER_HEALTH_PORT, and refuses it on an API node", () => {
    const shared = { sim: 'echo', store: 'postgres://db/x', queue: 'redis://cache' };
    expect(
      parseServerConfig({
        ...readCommandLine(['--worker', '--health-port', '9102'], {}),
        ...shared,
      }).healthPort,
    ).toBe(9102);
    expect(
      parseServerConfig({
        ...readCommandLine(['--worker'], { DELEGATE_SERVER_HEALTH_PORT: '9103' }),
        ...shared,
      }).healthPort,
    ).toBe(9103);
    expect(message({ ...shared, role: 'worker', healthPort: '70000' })).toMatch(
      /--health-port: must be at most 65535/,
    );
    expect(message({ ...shared, role: 'api', healthPort: 9102 })).toMatch(
      /--health-port: is for --worker processes only: an API node serves \/healthz, \/readyz and \/metrics on --port/,
    );
    expect(message({ sim: 'echo', healthPort: 9102 })).toMatch(/--health-port: is for --worker/);
    expect(() =>
      parseServerConfig({
        ...readCommandLine(['--api-only', '--health-port', '9102'], {}),
        ...shared,
      }),
    ).toThrow(/--health-port: is for --worker processes only/);
  });

  it('ignores DELEGATE_SERVER_HEALTH_PORT on an API node or a node with both roles, so API and worker processes can share one environment', () => {
    const shared = { sim: 'echo', store: 'postgres://db/x', queue: 'redis://cache' };
    const env = { DELEGATE_SERVER_HEALTH_PORT: '9104' };
    const apiOnly = parseServerConfig({ ...readCommandLine(['--api-only'], env), ...shared });
    expect(apiOnly.role).toBe('api');
    expect(apiOnly.healthPort).toBeUndefined();
    const both = parseServerConfig({ ...readCommandLine([], env), sim: 'echo' });
    expect(both.role).toBe('all');
    expect(both.healthPort).toBeUndefined();
  });

  it('names a bad store or queue URL by its flag without echoing its password', () => {
    const text = message({
      sim: 'echo',
      store: 'mysql://delegate:very-secret-pw@db/x',
      queue: 'http://user:other-secret@cache',
    });
    expect(text).toMatch(/--store: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(text).toMatch(/--queue: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(text).not.toContain('very-secret-pw');
    expect(text).not.toContain('other-secret');
  });
});
