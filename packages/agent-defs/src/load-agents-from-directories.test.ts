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

  it('reports only notes: the README, unknown keys, and unquoted `key: value` text in descriptions', async () => {
    const { diagnostics } = await loadAgentsFromDirectories({
      directories: [realistic],
      source: 'userSettings',
    });
    const notes = diagnostics.map(
      (diagnostic) => `${diagnostic.filePath.slice(realistic.length + 1)}: ${diagnostic.reason}`,
    );
    expect(notes).toEqual([
      expect.stringMatching(/^README\.md: no YAML frontmatter/),
      expect.stringMatching(/^engineering\/api-designer\.md: frontmatter is not strict YAML/),
      expect.stringMatching(/^engineering\/code-reviewer\.md: frontmatter is not strict YAML/),
      expect.stringMatching(/^engineering\/security-auditor\.md: unknown key `category`/),
      expect.stringMatching(/^engineering\/typescript-pro\.md: unknown key `version`/),
      expect.stringMatching(/^git-workflow-manager\.md: frontmatter is not strict YAML/),
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
      'bad-color',
      'bad-memory',
      'duplicate-agent',
      'duplicate-agent',
      'still-loads',
    ]);
  });

  it('reports invalid YAML with its line in the file', async () => {
    const [diagnostic] = (await loadBroken()).forFile('invalid-yaml.md');
    expect(diagnostic).toMatchObject({
      severity: 'error',
      reason: expect.stringMatching(/^invalid YAML frontmatter/),
    });
    expect(diagnostic?.line).toBeGreaterThanOrEqual(4);
    expect(diagnostic?.line).toBeLessThanOrEqual(6);
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

  it('refuses fields that limit the agent when they are the wrong type', async () => {
    const { forFile } = await loadBroken();
    expect(forFile('bad-permission-mode.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        line: 4,
        reason: expect.stringMatching(/`permissionMode` is the text "yolo"/),
      }),
    ]);
    expect(forFile('tools-wrong-type.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        reason: expect.stringMatching(/`tools` is a mapping/),
      }),
    ]);
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

  it('refuses names that could escape a directory', async () => {
    const { forFile } = await loadBroken();
    expect(forFile('escape-dotdot.md')[0]?.reason).toMatch(/contains '\.\.'/);
    expect(forFile('escape-backslash.md')[0]?.reason).toMatch(/path separator/);
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

  it('refuses text that is not UTF-8, unclosed frontmatter and frontmatter that is not a mapping', async () => {
    const { forFile } = await loadBroken();
    expect(forFile('not-utf8.md')).toEqual([
      expect.objectContaining({
        severity: 'error',
        reason: expect.stringMatching(/not valid UTF-8/),
      }),
    ]);
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

  it('follows symbolic links once each, so a link loop does not repeat agents, and skips dot entries', async () => {
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
      expect(result.agents.map((agent) => agent.agentType)).toEqual(['a', 'b']);
      expect(result.diagnostics).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('treats a missing directory as empty', async () => {
    const result = await loadAgentsFromDirectories({
      directories: [join(fixtures, 'does-not-exist')],
      source: 'userSettings',
    });
    expect(result).toEqual({ agents: [], diagnostics: [] });
  });
});

describe('loadAgentsFromDirectories on real-world quirks', () => {
  const quirks = join(fixtures, 'quirks');

  async function loadQuirks() {
    const result = await loadAgentsFromDirectories({
      directories: [quirks],
      source: 'userSettings',
    });
    const agent = (type: string) => result.agents.find((candidate) => candidate.agentType === type);
    const notesFor = (name: string) =>
      result.diagnostics
        .filter((diagnostic) => diagnostic.filePath === join(quirks, name))
        .map((diagnostic) => `${diagnostic.severity}: ${diagnostic.reason}`);
    return { ...result, agent, notesFor };
  }

  it('loads the quirky files other tools accept, with notes rather than errors', async () => {
    const { agents, diagnostics } = await loadQuirks();
    expect(agents.map((agent) => agent.agentType).sort()).toEqual([
      'bold-description',
      'comment-header',
      'hex-color',
      'indented-examples',
      'skill-style-tools',
      'wrapped-description',
    ]);
    expect(diagnostics.filter((diagnostic) => diagnostic.severity === 'error')).toEqual([]);
  });

  it('reads an indented example block under a plain description as part of the description', async () => {
    const { agent, notesFor } = await loadQuirks();
    const indented = agent('indented-examples');
    expect(indented?.whenToUse).toBe(
      'Maps an unfamiliar repository before a large change.\nExamples: - <example> Context: a team inherits a service nobody documented user: "Where does the billing logic live?" assistant: "I will ask indented-examples to map the modules first" </example>',
    );
    expect(indented?.tools).toEqual(['Read', 'Grep', 'Glob']);
    expect(notesFor('indented-examples.md')).toEqual([
      expect.stringMatching(/^info: frontmatter is not strict YAML/),
    ]);
  });

  it('joins a wrapped description and keeps the keys after it', async () => {
    const { agent } = await loadQuirks();
    expect(agent('wrapped-description')).toMatchObject({
      whenToUse:
        'Checks pages for keyboard access, colour contrast and labels, following the published accessibility guidelines',
      model: 'haiku',
    });
  });

  it('reads a description that starts with Markdown bold', async () => {
    const { agent } = await loadQuirks();
    expect(agent('bold-description')?.whenToUse).toBe(
      '**SCHEMA SPECIALIST**: Designs tables and indexes after the data model is agreed.',
    );
  });

  it('skips an HTML comment above the frontmatter and says so', async () => {
    const { agent, notesFor } = await loadQuirks();
    expect(agent('comment-header')).toMatchObject({
      whenToUse:
        'Answers questions about release notes.\nExamples: user: "What changed in 2.3?" assistant: "Here is the summary."',
      color: 'green',
    });
    expect(notesFor('comment-header.md')).toEqual([
      expect.stringMatching(/^info: an HTML comment comes before the frontmatter/),
      expect.stringMatching(/^info: frontmatter is not strict YAML \(the quoted value/),
    ]);
  });

  it('shows a hex color as the nearest agent color, with a note', async () => {
    const { agent, notesFor } = await loadQuirks();
    expect(agent('hex-color')?.color).toBe('blue');
    expect(notesFor('hex-color.md')).toEqual([
      'info: `color` #2E86DE is shown as the nearest agent color, blue',
    ]);
  });

  it('warns that a skill-style `allowed-tools` key leaves the agent with every tool', async () => {
    const { agent, notesFor } = await loadQuirks();
    expect(agent('skill-style-tools')?.tools).toBeUndefined();
    expect(notesFor('skill-style-tools.md')).toEqual([
      expect.stringMatching(/^warning: `allowed-tools` is not an agent key .* call it `tools`$/),
    ]);
  });

  it('does not look for frontmatter below a Markdown heading', async () => {
    const { notesFor } = await loadQuirks();
    expect(notesFor('heading-first.md')).toEqual([
      expect.stringMatching(/^info: no YAML frontmatter/),
    ]);
  });
});
