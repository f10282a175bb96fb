import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startInProcessSim } from './start-in-process-sim.js';

const apiSim = fileURLToPath(new URL('../../../../packages/api-sim/src/index.ts', import.meta.url));

async function ask(url: string): Promise<string> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: {
      'x-api-key': 'test',
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify({
      model: 'claude-sonnet-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'ping' }],
    }),
  });
  const body = (await response.json()) as { content: { text: string }[] };
  return body.content[0]!.text;
}

describe('startInProcessSim', () => {
  it('answers with the echo policy by name', async () => {
    const sim = await startInProcessSim({ policy: 'echo' });
    try {
      expect(await ask(sim.url)).toContain('ping');
    } finally {
      await sim.close();
    }
  });

  it('loads a policy module and refuses one without a default policy', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-sim-policy-'));
    try {
      const good = join(directory, 'policy.mjs');
      await writeFile(
        good,
        `import { script } from ${JSON.stringify(apiSim)};\nexport default script(['From the module.']);\n`,
      );
      const bad = join(directory, 'bad.mjs');
      await writeFile(bad, 'export const policy = 1;\n');
      await expect(startInProcessSim({ policy: bad })).rejects.toThrow(
        /must export a policy function/,
      );
      await expect(startInProcessSim({ policy: join(directory, 'missing.mjs') })).rejects.toThrow(
        /cannot load the policy module/,
      );
      const sim = await startInProcessSim({ policy: good });
      try {
        expect(await ask(sim.url)).toBe('From the module.');
      } finally {
        await sim.close();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
