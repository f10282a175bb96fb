import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
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

describe("a plugin manifest's `agents` paths, read as Claude Code 2.1.328 reads them", () => {
  let base: string;
  let plugin: string;
  const manifest = () => join(plugin, '.claude-plugin', 'plugin.json');
  const write = async (path: string, content: string): Promise<void> => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  };
  const agentText = (name: string) => `---\nname: ${name}\ndescription: ${name}.\n---\n${name}.\n`;
  const withAgents = async (agents: unknown): Promise<LoadedAgents> => {
    await write(manifest(), JSON.stringify({ name: 'acme', agents }));
    return loadPluginAgents({ pluginDirs: [plugin] });
  };
  const types = (loaded: LoadedAgents) => loaded.agents.map((entry) => entry.agentType);

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'plugin-manifest-agents-')));
    plugin = join(base, 'acme');
    await write(join(plugin, 'agents', 'default.md'), agentText('default'));
    await write(join(plugin, 'agents', 'other.md'), agentText('other'));
    await write(join(plugin, 'specialists', 'reviewer.md'), agentText('reviewer'));
    await write(join(plugin, 'extra', 'deep', 'tester.md'), agentText('tester'));
    await write(join(plugin, 'bundle.md', 'inside.md'), agentText('inside'));
    await write(join(base, 'outside', 'stolen.md'), agentText('stolen'));
    await symlink(join(base, 'outside', 'stolen.md'), join(plugin, 'linked-out.md'));
    await write(join(base, 'other-plugin', 'agents', 'fine.md'), agentText('fine'));
  });

  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('loads only the files it lists, not the agents/ folder too, each file once', async () => {
    const loaded = await withAgents([
      './specialists/reviewer.md',
      './extra/deep/tester.md',
      './agents/default.md',
      './specialists/reviewer.md',
    ]);
    // A listed file's folders do not join the type (Claude Code lists `acme:tester`).
    expect(types(loaded)).toEqual(['acme:reviewer', 'acme:tester', 'acme:default']);
    expect(loaded.agents[0]?.filePath).toBe(join(plugin, 'specialists', 'reviewer.md'));
    expect(loaded.failed).toEqual([]);
  });

  it('warns on the agents/ folder about its files the list leaves out', async () => {
    const loaded = await withAgents(['./agents/default.md']);
    expect(types(loaded)).toEqual(['acme:default']);
    expect(loaded.diagnostics).toEqual([
      {
        filePath: join(plugin, 'agents'),
        severity: 'warning',
        reason: `the agent file "other.md" here is not loaded: ${manifest()} lists the plugin's agent files in \`agents\`, and, as in Claude Code, those replace the agents/ folder; add the files to that list, or remove \`agents\` so this folder is read`,
      },
    ]);
    const none = await withAgents('./specialists/reviewer.md');
    expect(types(none)).toEqual(['acme:reviewer']);
    expect(none.diagnostics[0]?.reason).toMatch(
      /^2 agent files here \("default\.md", …\) are not loaded: /,
    );
  });

  it('reads a listed folder whose name ends in .md like agents/, as Claude Code does', async () => {
    expect(types(await withAgents(['./bundle.md']))).toEqual(['acme:inside']);
  });

  it('refuses listed paths that leave the plugin folder and warns about missing ones, naming plugin.json and the path', async () => {
    const loaded = await withAgents([
      './specialists/reviewer.md',
      './../outside/stolen.md',
      './linked-out.md',
      './missing.md',
    ]);
    expect(types(loaded)).toEqual(['acme:reviewer']);
    expect(
      loaded.diagnostics
        .filter((diagnostic) => diagnostic.filePath === manifest())
        .map((diagnostic) => [diagnostic.severity, diagnostic.reason]),
    ).toEqual([
      [
        'warning',
        expect.stringMatching(
          /^`agents` item 2: "\.\/\.\.\/outside\/stolen\.md" leads to .*, outside the plugin folder/,
        ),
      ],
      [
        'warning',
        expect.stringMatching(
          /^`agents` item 3: "\.\/linked-out\.md" leads through a symbolic link to .*stolen\.md, outside the plugin folder/,
        ),
      ],
      ['warning', expect.stringMatching(/^`agents` item 4: "\.\/missing\.md" does not exist/)],
    ]);
  });

  it('refuses the whole plugin when an entry is a folder, as Claude Code does, and still loads other plugins', async () => {
    await write(manifest(), JSON.stringify({ name: 'acme', agents: ['./agents'] }));
    const loaded = await loadPluginAgents({ pluginDirs: [plugin, join(base, 'other-plugin')] });
    expect(types(loaded)).toEqual(['other-plugin:fine']);
    expect(loaded.diagnostics).toEqual([
      {
        filePath: manifest(),
        severity: 'error',
        reason:
          '`agents` must list agent files, each a path that starts with "./" and ends in ".md", as Claude Code requires: item 1 "./agents" does not end in ".md"; Claude Code refuses the whole plugin, so none of "acme"\'s agents were loaded — list each agent file ("./agents/reviewer.md"), or remove `agents` so the agents/ folder is read',
      },
    ]);
  });

  it('refuses the whole plugin for every other entry Claude Code refuses, naming each bad one', async () => {
    const cases: Array<[unknown, string]> = [
      ['./extra/', 'the path "./extra/" does not end in ".md"'],
      [['./specialists/reviewer.md', './extra/'], 'item 2 "./extra/" does not end in ".md"'],
      [['specialists/reviewer.md'], 'item 1 "specialists/reviewer.md" does not start with "./"'],
      [['./specialists/REVIEWER.MD'], 'item 1 "./specialists/REVIEWER.MD" does not end in ".md"'],
      [[''], 'item 1 "" neither starts with "./" nor ends in ".md"'],
      [[3, null], 'item 1 is a number, not a path; item 2 is null, not a path'],
      [{ main: './agents/default.md' }, 'it is a mapping, not a path or a list of paths'],
    ];
    for (const [agents, problem] of cases) {
      const loaded = await withAgents(agents);
      expect(types(loaded), JSON.stringify(agents)).toEqual([]);
      expect(loaded.diagnostics, JSON.stringify(agents)).toEqual([
        expect.objectContaining({
          filePath: manifest(),
          severity: 'error',
          reason: expect.stringContaining(
            `as Claude Code requires: ${problem}; Claude Code refuses`,
          ),
        }),
      ]);
    }
  });

  it('loads no agent for an empty list, with a warning, as Claude Code loads none', async () => {
    const loaded = await withAgents([]);
    expect(types(loaded)).toEqual([]);
    expect(loaded.diagnostics).toEqual([
      expect.objectContaining({
        filePath: manifest(),
        severity: 'warning',
        reason: expect.stringMatching(/^`agents` is an empty list, so no agents were loaded/),
      }),
    ]);
  });
});

describe('plugin agent folders whose names cannot be part of a type', () => {
  let plugin: string;

  beforeAll(async () => {
    plugin = await mkdtemp(join(tmpdir(), 'plugin-folder-names-'));
    await mkdir(join(plugin, '.claude-plugin'));
    await writeFile(join(plugin, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'p' }));
    const folders = [
      'evil\nline',
      'rtl\u202eexe',
      'zero\u200bwidth',
      '__proto__',
      'a:b',
      ' ',
      'a',
      'ok',
    ];
    for (const folder of folders) {
      const nested = folder === 'a' ? join('a', 'b') : folder;
      await mkdir(join(plugin, 'agents', nested), { recursive: true });
      await writeFile(
        join(plugin, 'agents', nested, 'x.md'),
        '---\nname: x\ndescription: X.\n---\nX.\n',
      );
    }
  });

  afterAll(async () => {
    await rm(plugin, { recursive: true, force: true });
  });

  it('refuses the files of each bad folder with an error naming the folder, and loads the others', async () => {
    const loaded = await loadPluginAgents({ pluginDirs: [plugin] });
    expect(loaded.agents.map((entry) => entry.agentType).sort()).toEqual(['p:a:b:x', 'p:ok:x']);
    const reasons = loaded.failed.map((failed) => failed.diagnostic.reason).sort();
    expect(reasons).toEqual(
      [
        'the folder " " in AGENTS is blank (only spaces)',
        'the folder "__proto__" in AGENTS is reserved',
        'the folder "a:b" in AGENTS contains \':\'',
        'the folder "evil\\u{A}line" in AGENTS contains a control character',
        'the folder "rtl\\u{202E}exe" in AGENTS contains an invisible character (such as a zero-width space or a direction mark)',
        'the folder "zero\\u{200B}width" in AGENTS contains an invisible character (such as a zero-width space or a direction mark)',
      ]
        .map(
          (start) =>
            start.replace('AGENTS', join(plugin, 'agents')) +
            ', so it cannot be part of an agent type (plugin:folder:name) and its files are not loaded; rename the folder',
        )
        .sort(),
    );
    expect(loaded.failed.every((failed) => failed.diagnostic.severity === 'error')).toBe(true);
  });
});
