import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLimiter } from './create-limiter.js';
import { loadAgentsFromDirectories } from './load-agents-from-directories.js';
import { MAX_AGENT_FILE_BYTES } from './read-agent-file.js';

const fixtures = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const realistic = join(fixtures, 'realistic');
const broken = join(fixtures, 'broken');
const quirks = join(fixtures, 'quirks');

describe('loadAgentsFromDirectories on a realistic collection', () => {
  it('loads every agent with no errors or warnings', async () => {
    const { agents, diagnostics } = await loadAgentsFromDirectories({
      directories: [realistic],
      source: 'userSettings',
    });
    expect(diagnostics.filter((diagnostic) => diagnostic.severity !== 'info')).toEqual([]);
    expect(agents).toHaveLength(27);
    expect(new Set(agents.map((agent) => agent.agentType)).size).toBe(27);
    for (const agent of agents) {
      expect(agent.whenToUse.length).toBeGreaterThan(20);
      expect(agent.getSystemPrompt().length).toBeGreaterThan(20);
      expect(agent.source).toBe('userSettings');
      expect(agent.baseDir).toBe(realistic);
    }
  });

  it('reports only notes: the README and other docs, slash commands, unknown keys, and unquoted `key: value` text in descriptions', async () => {
    const { diagnostics } = await loadAgentsFromDirectories({
      directories: [realistic],
      source: 'userSettings',
    });
    const notes = diagnostics.map(
      (diagnostic) => `${diagnostic.filePath.slice(realistic.length + 1)}: ${diagnostic.reason}`,
    );
    // CONTRIBUTING.md shows the agent template in code fences, and ops/deploy-notes.md has `---`
    // rules around a YAML block with `name:`: documents, not misplaced frontmatter.
    expect(notes).toEqual([
      expect.stringMatching(/^CONTRIBUTING\.md: no YAML frontmatter/),
      expect.stringMatching(/^README\.md: no YAML frontmatter/),
      // Commands copied from a collection beside its agents: Claude Code skips them silently.
      expect.stringMatching(
        /^commands\/red-green\.md: looks like a slash command, not an agent \(it is in a folder named `commands`/,
      ),
      expect.stringMatching(
        /^commands\/setup\.md: looks like a slash command, not an agent \(its frontmatter has `argument-hint`/,
      ),
      expect.stringMatching(/^engineering\/api-designer\.md: the frontmatter is not strict YAML/),
      expect.stringMatching(/^engineering\/code-reviewer\.md: the frontmatter is not strict YAML/),
      expect.stringMatching(/^engineering\/security-auditor\.md: unknown key `category`/),
      expect.stringMatching(/^engineering\/typescript-pro\.md: unknown key `version`/),
      expect.stringMatching(/^git-workflow-manager\.md: the frontmatter is not strict YAML/),
      expect.stringMatching(/^ops\/deploy-notes\.md: no YAML frontmatter/),
      expect.stringMatching(/^ui-ux-designer\.md: unknown key `tags`/),
    ]);
    expect(diagnostics.every((diagnostic) => diagnostic.severity === 'info')).toBe(true);
    expect(
      diagnostics.find((diagnostic) => diagnostic.filePath.endsWith('typescript-pro.md'))?.line,
    ).toBe(7);
  });

  it('loads files in sorted path order, recursing into subdirectories', async () => {
    const { agents } = await loadAgentsFromDirectories({
      directories: [realistic],
      source: 'userSettings',
      limiter: createLimiter(3),
    });
    const paths = agents.map((agent) => agent.filePath ?? '');
    expect(paths).toEqual([...paths].sort());
    expect(paths.some((path) => path.includes(join('ops', 'database-admin.md')))).toBe(true);
  });

  it('reads the fields real files use', async () => {
    const { agents } = await loadAgentsFromDirectories({
      directories: [realistic],
      source: 'projectSettings',
    });
    const byType = new Map(agents.map((agent) => [agent.agentType, agent]));
    const reviewer = byType.get('code-reviewer');
    expect(reviewer?.tools).toEqual(['Read', 'Grep', 'Glob', 'Bash']);
    expect(reviewer?.model).toBe('sonnet');
    expect(reviewer?.color).toBe('red');
    expect(reviewer?.whenToUse).toContain(
      'Examples:\n\n<example>\nContext: The user just finished a new endpoint.',
    );
    expect(byType.get('test-runner')?.tools).toEqual(['Read', 'Edit', 'Bash', 'Grep', 'Glob']);
    expect(byType.get('test-runner')?.whenToUse).toMatch(
      /^Use proactively[\s\S]*<example>[\s\S]*<\/example>$/,
    );
    expect(byType.get('security-auditor')?.tools).toEqual([
      'Read',
      'Grep',
      'Glob',
      'Bash(npm audit:*)',
      'Bash(git log:*)',
    ]);
    expect(byType.get('api-designer')?.model).toBe('sonnet');
    expect(byType.get('api-designer')?.effort).toBe('high');
    expect(byType.get('performance-engineer')?.effort).toBe(16000);
    expect(byType.get('backend-architect')?.tools).toEqual(['*']);
    expect(byType.get('backend-architect')?.whenToUse).toContain(
      '"How should we split the monolith?"',
    );
    expect(byType.get('frontend-developer')?.tools).toBeUndefined();
    expect(byType.get('refactoring-expert')?.tools).toContain('Bash(git diff, git status)');
    expect(byType.get('refactoring-expert')?.maxTurns).toBe(40);
    expect(byType.get('git-workflow-manager')?.tools).toEqual([
      'Bash(git add, git commit, git rebase:*)',
      'Bash(git status)',
      'Read',
    ]);
    expect(byType.get('team-lead')?.tools?.[0]).toBe('Agent(code-reviewer, test-runner, debugger)');
    expect(byType.get('team-lead')?.maxTurns).toBe(60);
    expect(byType.get('deployment-engineer')?.tools).toContain(
      'Bash(kubectl get:*, kubectl describe:*)',
    );
    expect(byType.get('deployment-engineer')?.isolation).toBe('worktree');
    expect(byType.get('database-admin')?.memory).toBe('project');
    expect(byType.get('database-admin')?.tools).toEqual(['Read', 'Bash', 'Grep', 'Write', 'Edit']);
    expect(byType.get('research-assistant')?.tools).toEqual([
      'WebSearch',
      'WebFetch',
      'Read',
      'Write',
      'Edit',
    ]);
    expect(byType.get('ml-engineer')?.skills).toEqual(['experiment-tracking', 'model-cards']);
    expect(byType.get('data-engineer')?.mcpServers).toEqual(['bigquery', 'airflow']);
    expect(byType.get('mobile-developer')?.requiredMcpServers).toEqual(['simulator']);
    expect(byType.get('architect-reviewer')?.disallowedTools).toEqual(['Edit', 'Write']);
    expect(byType.get('incident-responder')?.background).toBe(false);
    expect(byType.get('incident-responder')?.initialPrompt).toMatch(/^Start by summarising/);
    expect(byType.get('devops-troubleshooter')?.permissionMode).toBe('default');
    expect(byType.get('prompt-engineer')?.getSystemPrompt()).toBe(
      'You are an expert prompt engineer.\n\nAlways show the complete prompt text you propose, explain each design choice, and suggest how to evaluate it.',
    );
    expect(byType.get('accessibility-checker')?.model).toBe('haiku');
  });
});

describe('loadAgentsFromDirectories on broken files', () => {
  async function loadBroken() {
    const result = await loadAgentsFromDirectories({
      directories: [broken],
      source: 'projectSettings',
    });
    const forFile = (name: string) =>
      result.diagnostics.filter((diagnostic) => diagnostic.filePath === join(broken, name));
    return { ...result, forFile };
  }

  it('still loads the good agents next to broken ones', async () => {
    const { agents } = await loadBroken();
    expect(agents.map((agent) => agent.agentType).sort()).toEqual([
      '..',
      'bad-color',
      'bad-memory',
      'bad-permission-mode',
      'duplicate-agent',
      'duplicate-agent',
      'evil\\agent',
      'invalid-yaml',
      'latin1-agent',
      'still-loads',
      'tools-wrong-type',
    ]);
  });

  it('reads a flow list that never closes as Claude Code’s repair does, and says so', async () => {
    const { forFile, agents } = await loadBroken();
    expect(forFile('invalid-yaml.md')).toEqual([
      expect.objectContaining({
        severity: 'info',
        reason: expect.stringMatching(/not strict YAML/),
      }),
    ]);
    expect(agents.find((agent) => agent.agentType === 'invalid-yaml')?.tools).toEqual([
      '[Read',
      'Grep',
    ]);
  });

  it('reports a missing name and a missing or non-text description', async () => {
    const { forFile } = await loadBroken();
    expect(forFile('missing-name.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        reason: expect.stringMatching(/missing `name`/),
      }),
    ]);
    expect(forFile('missing-description.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        agentType: 'missing-description',
        reason: expect.stringMatching(/missing `description`/),
      }),
    ]);
    expect(forFile('numeric-description.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        line: 3,
        reason: expect.stringMatching(/`description` must be text/),
      }),
    ]);
  });

  it('reads fields that limit the agent as Claude Code does when they are the wrong type', async () => {
    const { forFile, agents } = await loadBroken();
    expect(forFile('bad-permission-mode.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        line: 4,
        reason: expect.stringMatching(/`permissionMode` is the text "yolo"/),
      }),
    ]);
    expect(forFile('tools-wrong-type.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        reason: expect.stringMatching(
          /`tools` is present but a mapping, so the agent gets no tools/,
        ),
      }),
    ]);
    expect(agents.find((agent) => agent.agentType === 'tools-wrong-type')?.tools).toEqual([]);
  });

  it('drops optional fields that have a fallback, with a warning', async () => {
    const { forFile, agents } = await loadBroken();
    expect(forFile('bad-memory.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        line: 5,
        reason: expect.stringMatching(/`memory` is the text "everywhere"/),
      }),
    ]);
    expect(forFile('bad-color.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        reason: expect.stringMatching(/`color` is the text "magenta"/),
      }),
    ]);
    const badMemory = agents.find((agent) => agent.agentType === 'bad-memory');
    expect(badMemory?.memory).toBeUndefined();
    expect(badMemory?.tools).toEqual(['Read', 'Grep']);
  });

  it('refuses an alias bomb', async () => {
    expect((await loadBroken()).forFile('alias-bomb.md')).toEqual([
      expect.objectContaining({ severity: 'error', reason: expect.stringMatching(/alias bomb/) }),
    ]);
  });

  it('accepts path-unsafe names as Claude Code does, and refuses control characters', async () => {
    const { forFile } = await loadBroken();
    expect(forFile('escape-dotdot.md')).toEqual([]);
    expect(forFile('escape-backslash.md')).toEqual([]);
    expect(forFile('escape-control.md')[0]?.reason).toMatch(/control character/);
  });

  it('lets the later of two files with the same name win, with a warning', async () => {
    const { forFile, agents } = await loadBroken();
    expect(forFile('duplicate-second.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        reason: expect.stringContaining(join(broken, 'duplicate-first.md')),
      }),
    ]);
    const duplicates = agents.filter((agent) => agent.agentType === 'duplicate-agent');
    expect(duplicates.at(-1)?.getSystemPrompt()).toBe('Second.');
  });

  it('says a .delegate/agents file beats the .claude/agents one, which is all Claude Code reads', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delegate-both-folders-'));
    try {
      const claude = join(root, '.claude', 'agents');
      const delegate = join(root, '.delegate', 'agents');
      for (const [folder, body] of [
        [claude, 'Claude.'],
        [delegate, 'Delegate.'],
      ] as const) {
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, 'r.md'), `---\nname: r\ndescription: d\n---\n${body}`);
      }
      const { agents, diagnostics } = await loadAgentsFromDirectories({
        directories: [claude, delegate],
        source: 'projectSettings',
      });
      expect(agents.at(-1)?.getSystemPrompt()).toBe('Delegate.');
      expect(diagnostics).toEqual([
        expect.objectContaining({
          severity: 'warning',
          filePath: join(delegate, 'r.md'),
          reason: expect.stringContaining(
            `(a .delegate/agents file beats a .claude/agents file), while Claude Code reads only ${join(claude, 'r.md')}`,
          ),
        }),
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('reads bytes that are not UTF-8 as U+FFFD, as Claude Code does, and names their line', async () => {
    const { forFile, agents } = await loadBroken();
    expect(agents.find((agent) => agent.agentType === 'latin1-agent')?.whenToUse).toBe(
      'Caf\ufffd written in Latin-1.',
    );
    expect(forFile('not-utf8.md')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        line: 3,
        reason: expect.stringMatching(
          /^line 3 holds bytes that are not UTF-8 .* save the file as UTF-8$/,
        ),
      }),
    ]);
  });

  it('refuses unclosed frontmatter and frontmatter that is not a mapping', async () => {
    const { forFile } = await loadBroken();
    expect(forFile('unclosed-frontmatter.md')).toEqual([
      expect.objectContaining({ severity: 'error', line: 1 }),
    ]);
    expect(forFile('frontmatter-list.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        reason: expect.stringMatching(/not a mapping/),
      }),
    ]);
  });

  it('skips plain Markdown with an info note', async () => {
    expect((await loadBroken()).forFile('notes.md')).toEqual([
      expect.objectContaining({ severity: 'info' }),
    ]);
  });

  it('refuses a file over 1 MiB without losing the others', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'agent-defs-huge-'));
    try {
      const padding = 'x'.repeat(MAX_AGENT_FILE_BYTES);
      await writeFile(
        join(directory, 'huge.md'),
        `---\nname: huge\ndescription: Too big.\n---\n\n${padding}\n`,
      );
      await writeFile(
        join(directory, 'small.md'),
        '---\nname: small\ndescription: Fine.\n---\n\nSmall.\n',
      );
      const { agents, diagnostics } = await loadAgentsFromDirectories({
        directories: [directory],
        source: 'userSettings',
      });
      expect(agents.map((agent) => agent.agentType)).toEqual(['small']);
      expect(diagnostics).toEqual([
        expect.objectContaining({
          filePath: join(directory, 'huge.md'),
          severity: 'error',
          reason: expect.stringMatching(/over the 1048576-byte limit/),
        }),
      ]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('follows symbolic links once each, so a link loop does not repeat agents, and reads hidden files as Claude Code does', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'agent-defs-links-'));
    try {
      const agents = join(directory, 'agents');
      const shared = join(directory, 'shared');
      await mkdir(agents);
      await mkdir(shared);
      await writeFile(join(agents, 'a.md'), '---\nname: a\ndescription: A.\n---\nA.');
      await writeFile(join(shared, 'b.md'), '---\nname: b\ndescription: B.\n---\nB.');
      await writeFile(join(agents, '.hidden.md'), '---\nname: hidden\ndescription: H.\n---\nH.');
      await symlink(shared, join(agents, 'linked'));
      await symlink(agents, join(agents, 'loop'));
      await symlink(join(directory, 'missing.md'), join(agents, 'dangling.md'));
      const result = await loadAgentsFromDirectories({
        directories: [agents],
        source: 'userSettings',
      });
      expect(result.agents.map((agent) => agent.agentType)).toEqual(['hidden', 'a', 'b']);
      // The loop is no agent and no problem; the link to nothing says why it is not one.
      expect(result.diagnostics).toEqual([
        expect.objectContaining({
          filePath: join(agents, 'dangling.md'),
          severity: 'warning',
          reason: expect.stringMatching(/link to a file that does not exist/),
        }),
      ]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('treats a missing directory as empty', async () => {
    const result = await loadAgentsFromDirectories({
      directories: [join(fixtures, 'does-not-exist')],
      source: 'userSettings',
    });
    expect(result).toEqual({ agents: [], diagnostics: [], failed: [] });
  });
});

describe('loadAgentsFromDirectories on real-world quirks', () => {
  it('loads the quirky files Claude Code loads and explains each one it skips', async () => {
    const result = await loadAgentsFromDirectories({
      directories: [quirks],
      source: 'projectSettings',
    });
    expect(result.agents.map((agent) => agent.agentType)).toEqual([
      'bold-description',
      'examples-as-keys',
      'hex-color',
      'skill-style-tools',
    ]);
    const errors = result.diagnostics
      .filter((diagnostic) => diagnostic.severity === 'error')
      .map((diagnostic) => [diagnostic.filePath.slice(quirks.length + 1), diagnostic.line]);
    expect(errors).toEqual([
      ['comment-header.md', 2],
      ['examples-at-column-zero.md', 6],
      ['heading-first.md', 3],
      ['indented-examples.md', 5],
      ['wrapped-description.md', 4],
    ]);
    expect(result.failed.map((failed) => failed.agentType)).toEqual([
      'comment-header',
      'examples-at-column-zero',
      'heading-first',
      'indented-examples',
      'wrapped-description',
    ]);
  });

  it('shows a hex color as the nearest agent color, with a note', async () => {
    const result = await loadAgentsFromDirectories({
      directories: [quirks],
      source: 'projectSettings',
    });
    expect(result.agents.find((agent) => agent.agentType === 'hex-color')?.color).toBe('blue');
  });

  it('warns that a skill-style `allowed-tools` key leaves the agent with every tool', async () => {
    const result = await loadAgentsFromDirectories({
      directories: [quirks],
      source: 'projectSettings',
    });
    const agent = result.agents.find((entry) => entry.agentType === 'skill-style-tools');
    expect(agent?.tools).toBeUndefined();
    expect(
      result.diagnostics.find((diagnostic) => diagnostic.agentType === 'skill-style-tools')?.reason,
    ).toMatch(/`allowed-tools` is not an agent key/);
  });
});
