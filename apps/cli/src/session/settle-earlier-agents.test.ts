import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DelegateSession } from '@delegate/runtime';
import { settleEarlierAgents } from './settle-earlier-agents.js';

let root: string | undefined;
let session: DelegateSession | undefined;

afterEach(async () => {
  session?.abort();
  await session?.flush();
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
  session = undefined;
});

describe('settleEarlierAgents', () => {
  it('prints an unfinished sub-agent with the escape sequences of its model-written description made harmless', async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-settle-')));
    const transcriptDir = join(root, 'transcripts');
    const sessionId = 'c0ffee00-0000-4000-8000-000000000001';
    const agents = join(transcriptDir, sessionId, 'agents');
    await mkdir(agents, { recursive: true });
    await writeFile(join(transcriptDir, `${sessionId}.jsonl`), '');
    // What a model's Agent call wrote: an escape sequence that would recolour the terminal.
    await writeFile(
      join(agents, 'a0123456789abcdef.meta.json'),
      JSON.stringify({
        agentType: 'general-purpose',
        description: 'scan \u001b[31mred\u001b[0m now',
      }),
    );
    await writeFile(join(agents, 'a0123456789abcdef.jsonl'), '');
    session = await DelegateSession.create({
      cwd: root,
      homeDir: root,
      apiKey: 'sim',
      baseURL: 'http://127.0.0.1:9',
      transcriptDir,
      sessionId,
      resume: true,
    });
    const warnings: string[] = [];
    await settleEarlierAgents({ session, transcriptDir, onWarning: (line) => warnings.push(line) });
    const line = warnings.find((warning) => warning.includes('a0123456789abcdef'));
    expect(line).toContain('"scan ?[31mred?[0m now"');
    expect(line).not.toContain('\u001b');
  });
});
