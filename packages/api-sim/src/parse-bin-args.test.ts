import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseBinArguments } from './parse-bin-args.js';

describe('parseBinArguments', () => {
  it('reads port, host, policy, pacing and seed in both flag forms', () => {
    expect(
      parseBinArguments([
        '--port',
        '8080',
        '--host=0.0.0.0',
        '--policy',
        './p.mjs',
        '--pacing=200,5',
        '--seed',
        'x',
      ]),
    ).toEqual({
      port: 8080,
      host: '0.0.0.0',
      policyPath: './p.mjs',
      pacing: { timeToFirstTokenMs: 200, msPerToken: 5 },
      seed: 'x',
      help: false,
    });
  });

  it('defaults to any free port on 127.0.0.1 with no pacing', () => {
    expect(parseBinArguments([])).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      pacing: {},
      policyPath: undefined,
    });
  });

  it('refuses unknown flags and bad numbers with the usage text', () => {
    expect(() => parseBinArguments(['--verbose'])).toThrow(
      /unknown argument "--verbose"[\s\S]*Usage: delegate-sim/,
    );
    expect(() => parseBinArguments(['--port', 'abc'])).toThrow(
      /--port needs a non-negative number/,
    );
    expect(() => parseBinArguments(['--pacing', '5,x'])).toThrow(/--pacing/);
  });
});

describe('delegate-sim command', () => {
  it('prints its URL and serves the policy module given with --policy', async () => {
    const bin = fileURLToPath(new URL('./bin.ts', import.meta.url));
    const policy = fileURLToPath(new URL('./__fixtures__/shout-policy.mjs', import.meta.url));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', bin, '--port', '0', '--policy', policy],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        // Workspace packages resolve to their source: the test needs no build.
        env: {
          ...process.env,
          TSX_TSCONFIG_PATH: fileURLToPath(
            new URL('../../../tsconfig.source.json', import.meta.url),
          ),
        },
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n')[0];
          if (output.includes('\n') && line) resolve(line.trim());
        });
        child.stderr.on('data', (chunk: Buffer) => reject(new Error(chunk.toString())));
        child.on('exit', (code) => reject(new Error(`delegate-sim exited with ${code}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-5',
          max_tokens: 20,
          messages: [{ role: 'user', content: 'quiet' }],
        }),
      });
      const body = (await response.json()) as { content: Array<{ text: string }> };
      expect(body.content[0]?.text).toBe('QUIET');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
