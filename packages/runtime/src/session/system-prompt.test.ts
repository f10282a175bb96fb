import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  enhanceSystemPromptWithEnvDetails,
  getEnvironmentDetails,
  getMainSystemPrompt,
} from './system-prompt.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('system prompt', () => {
  it('renders cwd, platform, date and whether the cwd is a git repository', async () => {
    dir = await mkdtemp(join(tmpdir(), 'delegate-env-'));
    const plain = getEnvironmentDetails({ cwd: dir, now: new Date('2026-03-04T10:00:00Z') });
    expect(plain).toMatchObject({
      cwd: dir,
      platform: process.platform,
      date: '2026-03-04',
      isGitRepo: false,
    });
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const repo = getEnvironmentDetails({ cwd: dir });
    expect(repo.isGitRepo).toBe(true);
    const prompt = getMainSystemPrompt({ environment: plain }).join('\n');
    expect(prompt).toContain(`Working directory: ${dir}`);
    expect(prompt).toContain('Is a git repository: no');
    expect(prompt).toContain("Today's date: 2026-03-04");
    expect(prompt).toContain('Agent tool');
  });

  it('keeps a custom prompt and appends extra text', () => {
    const environment = { cwd: '/w', platform: 'linux', date: '2026-01-01', isGitRepo: true };
    const blocks = getMainSystemPrompt({
      environment,
      customPrompt: 'Custom.',
      appendPrompt: 'Extra.',
    });
    expect(blocks[0]).toBe('Custom.');
    expect(blocks.at(-1)).toBe('Extra.');
  });

  it('adds environment details after an agent prompt', () => {
    const environment = { cwd: '/w', platform: 'linux', date: '2026-01-01', isGitRepo: true };
    const blocks = enhanceSystemPromptWithEnvDetails(['You review code.'], environment);
    expect(blocks[0]).toBe('You review code.');
    expect(blocks.at(-1)).toContain('Working directory: /w');
  });
});
