import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadedAgents } from './load-agents-from-directories.js';
import { loadPluginAgents } from './load-plugin-agents.js';

// How Claude Code reads a plugin's agents folder, which differs from `.claude/agents`:
// every .md file is an agent (anthropics/claude-code#86841, #91871; JuliusBrussee/caveman#912
// lists `caveman:docs:CLAUDE` for a frontmatter-less agents/docs/CLAUDE.md), named after the
// file when it sets no name (many plugins write only a description), the
// folders below agents/ join the type, a file without a description gets "Agent from <plugin>
// plugin", and permissionMode, hooks and mcpServers are ignored (anthropics/claude-code#54921).
const files: Record<string, string> = {
  'agents/named.md': '---\nname: reviewer\ndescription: Reviews.\ntools: Read\n---\nReview.\n',
  'agents/describer.md': '---\ndescription: Describes.\ncapabilities: [a, b]\n---\nDescribe.\n',
  'agents/review/deep.md': '---\nname: deep\ndescription: Deep review.\n---\nGo deep.\n',
  'agents/review/named.md': '---\nname: reviewer\ndescription: Nested reviewer.\n---\nAgain.\n',
  'agents/no-description.md': '---\nname: quiet\ntools: Grep\n---\nQuiet.\n',
  'agents/docs/README.md': '# Notes for maintainers\n\nNot an agent.\n',
  // The description ends with ':' and its examples follow at column 0: YAML cannot read it.
  'agents/broken.md':
    '---\nname: broken\ndescription: Use it for these cases:\nuser: "help"\n<example>\ntools: Read\n---\nBroken.\n',
  'agents/privileged.md':
    '---\nname: privileged\ndescription: Wants more.\npermissionMode: bypassPermissions\nhooks: not-a-hooks-map\nmcpServers:\n  db: { command: run-db }\n---\nMore.\n',
};

let root: string;
let loaded: LoadedAgents;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'plugin-agents-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  await mkdir(join(root, '.claude-plugin'));
  await writeFile(join(root, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'acme' }));
  loaded = await loadPluginAgents({ pluginDirs: [root] });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const agent = (type: string) => loaded.agents.find((candidate) => candidate.agentType === type);
const warningsOf = (file: string) =>
  loaded.diagnostics.filter(
    (diagnostic) => diagnostic.filePath === join(root, file) && diagnostic.severity === 'warning',
  );

describe("a plugin's agents folder, read as Claude Code reads it", () => {
  it('loads every file, with no error', () => {
    expect(loaded.failed).toEqual([]);
    expect(loaded.agents.map((loadedAgent) => loadedAgent.agentType).sort()).toEqual([
      'acme:broken',
      'acme:describer',
      'acme:docs:README',
      'acme:privileged',
      'acme:quiet',
      'acme:review:deep',
      'acme:review:reviewer',
      'acme:reviewer',
    ]);
  });

  it('adds the folders below agents/ to the type, so same names in two folders are two agents', () => {
    expect(agent('acme:review:deep')?.getSystemPrompt()).toBe('Go deep.');
    expect(agent('acme:reviewer')?.whenToUse).toBe('Reviews.');
    expect(agent('acme:review:reviewer')?.whenToUse).toBe('Nested reviewer.');
    expect(loaded.diagnostics.some((diagnostic) => /defined both/.test(diagnostic.reason))).toBe(
      false,
    );
  });

  it('names a file that sets no name after the file, without a warning', () => {
    expect(agent('acme:describer')).toMatchObject({ whenToUse: 'Describes.', plugin: 'acme' });
    expect(warningsOf('agents/describer.md')).toEqual([]);
  });

  it('gives an agent without a description the placeholder, and warns on its file', () => {
    expect(agent('acme:quiet')).toMatchObject({
      whenToUse: 'Agent from acme plugin',
      tools: ['Grep'],
    });
    expect(warningsOf('agents/no-description.md')).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(
          /^missing `description`, so the main agent sees only "Agent from acme plugin"/,
        ),
      }),
    ]);
  });

  it('loads a file without frontmatter with every tool and says so', () => {
    const readme = agent('acme:docs:README');
    expect(readme).toMatchObject({ whenToUse: 'Agent from acme plugin' });
    expect(readme?.tools).toBeUndefined();
    expect(readme?.getSystemPrompt()).toBe('# Notes for maintainers\n\nNot an agent.');
    expect(warningsOf('agents/docs/README.md')).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(
          /^no YAML frontmatter .*so this is agent "acme:docs:README", named after the file, described only as "Agent from acme plugin" and allowed every tool/,
        ),
      }),
    ]);
  });

  it('loads a file whose YAML cannot be read without any of its fields, naming the line to fix', () => {
    const broken = agent('acme:broken');
    expect(broken).toMatchObject({ whenToUse: 'Agent from acme plugin' });
    // Claude Code reads no `tools` from the broken block either: the agent gets every tool.
    expect(broken?.tools).toBeUndefined();
    expect(broken?.getSystemPrompt()).toBe('Broken.');
    expect(warningsOf('agents/broken.md')).toEqual([
      expect.objectContaining({
        line: 3,
        reason: expect.stringMatching(
          /^no field of the frontmatter is read, because YAML cannot read it; .* — the value of `description` ends with ':'/,
        ),
      }),
    ]);
  });

  it('ignores permissionMode, hooks and mcpServers, each with a warning on its line', () => {
    const privileged = agent('acme:privileged');
    expect(privileged?.permissionMode).toBeUndefined();
    expect(privileged?.hooks).toBeUndefined();
    expect(privileged?.mcpServers).toBeUndefined();
    expect(
      warningsOf('agents/privileged.md').map((warning) => [
        warning.line,
        warning.reason.split(' is ')[0],
      ]),
    ).toEqual([
      [4, '`permissionMode`'],
      [5, '`hooks`'],
      [6, '`mcpServers`'],
    ]);
  });
});
