import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { buildWorktreeNotice } from './build-worktree-notice.js';

describe('buildWorktreeNotice', () => {
  it('names both directories and asks the fork to translate paths and re-read files', () => {
    const notice = buildWorktreeNotice('/home/ada/repo', '/home/ada/repo/.worktrees/agent-1234');
    expect(notice).toContain('/home/ada/repo/.worktrees/agent-1234');
    expect(notice).toContain('took place in /home/ada/repo,');
    expect(notice).toMatch(/translate/i);
    expect(notice).toMatch(/read a file again before you edit it/i);
  });

  it('refuses an empty directory', () => {
    expect(() => buildWorktreeNotice('', '/tmp/worktree')).toThrow(DelegateError);
    expect(() => buildWorktreeNotice('/repo', '  ')).toThrow(/worktree/);
  });
});
