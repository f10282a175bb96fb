import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clearAgentDefinitionsCache,
  getAgentDefinitionsWithOverrides,
  type AgentDefinitionsOptions,
} from './get-agent-definitions-with-overrides.js';

let root: string;
let home: string;
let repo: string;
let cwd: string;
let policy: string;
let plugin: string;

async function agentFile(path: string, name: string, prompt: string, extra = ''): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(
    path,
    `---\nname: ${name}\ndescription: ${name} from ${prompt}.\n${extra}---\n\n${prompt}\n`,
  );
}

beforeEach(async () => {
  clearAgentDefinitionsCache();
  root = await mkdtemp(join(tmpdir(), 'agent-defs-sources-'));
  home = join(root, 'home');
  repo = join(root, 'repo');
  cwd = join(repo, 'packages', 'app');
  policy = join(root, 'policy');
  plugin = join(root, 'plugins', 'acme-dir');
  await mkdir(join(repo, '.git'), { recursive: true });
  await mkdir(cwd, { recursive: true });
});

afterEach(async () => {
  clearAgentDefinitionsCache();
  await rm(root, { recursive: true, force: true });
});

function load(options: Partial<AgentDefinitionsOptions> = {}) {
  return getAgentDefinitionsWithOverrides({
    cwd,
    homeDir: home,
    policyDir: policy,
    pluginDirs: [plugin],
    ...options,
  });
}

describe('getAgentDefinitionsWithOverrides precedence', () => {
  beforeEach(async () => {
    await mkdir(join(plugin, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(plugin, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'acme' }),
    );
    await agentFile(join(plugin, 'agents', 'x.md'), 'x', 'plugin');
    await agentFile(join(plugin, 'agents', 'y.md'), 'y', 'plugin');
    await agentFile(join(home, '.claude', 'agents', 'y.md'), 'acme:y', 'user');
    await agentFile(join(home, '.claude', 'agents', 'gp.md'), 'general-purpose', 'user');
    await agentFile(join(home, '.delegate', 'agents', 'plan.md'), 'Plan', 'user');
    await agentFile(join(home, '.claude', 'agents', 'shared.md'), 'shared', 'user');
    await agentFile(join(repo, '.claude', 'agents', 'gp.md'), 'general-purpose', 'project');
    await agentFile(join(repo, '.claude', 'agents', 'explore.md'), 'Explore', 'project-far');
    await agentFile(join(cwd, '.delegate', 'agents', 'explore.md'), 'Explore', 'project-near');
    await agentFile(join(repo, '.delegate', 'agents', 'nested', 'plan.md'), 'Plan', 'project');
    await agentFile(join(repo, '.claude', 'agents', 'shared.md'), 'shared', 'project');
    await agentFile(join(policy, 'shared.md'), 'shared', 'policy');
  });

  const flagAgents = {
    Plan: { description: 'Plan from flag.', prompt: 'flag' },
    shared: { description: 'shared from flag.', prompt: 'flag' },
  };

  it('lets each higher source override a lower one: built-in < plugin < user < project < flag < policy', async () => {
    const result = await load({ flagAgents });
    // A file cannot take a plugin agent's `plugin:name`: Claude Code refuses names with ':'.
    expect(result.diagnostics.filter((diagnostic) => diagnostic.severity === 'error')).toEqual([
      expect.objectContaining({
        filePath: join(home, '.claude', 'agents', 'y.md'),
        reason: expect.stringContaining("contains ':'"),
      }),
    ]);
    expect(result.failedAgents).toEqual([
      expect.objectContaining({ agentType: 'acme:y', source: 'userSettings' }),
    ]);
    const active = new Map(result.activeAgents.map((agent) => [agent.agentType, agent]));
    expect(active.get('acme:x')?.getSystemPrompt()).toBe('plugin');
    expect(active.get('acme:y')?.getSystemPrompt()).toBe('plugin');
    expect(active.get('general-purpose')?.getSystemPrompt()).toBe('project');
    expect(active.get('Explore')?.getSystemPrompt()).toBe('project-near');
    expect(active.get('Plan')?.getSystemPrompt()).toBe('flag');
    expect(active.get('shared')?.getSystemPrompt()).toBe('policy');
    expect(active.get('shared')?.source).toBe('policySettings');
    expect(result.activeAgents).toHaveLength(6);
  });

  it('keeps every definition in allAgents, lowest precedence first, to show what overrode what', async () => {
    const result = await load({ flagAgents });
    const shared = result.allAgents.filter((agent) => agent.agentType === 'shared');
    expect(shared.map((agent) => `${agent.source}:${agent.getSystemPrompt()}`)).toEqual([
      'userSettings:user',
      'projectSettings:project',
      'flagSettings:flag',
      'policySettings:policy',
    ]);
    const explore = result.allAgents.filter((agent) => agent.agentType === 'Explore');
    // Project folders are read from the repository root down to cwd: the nearest wins, as in Claude Code.
    expect(explore.map((agent) => agent.getSystemPrompt())).toEqual([
      expect.stringMatching(/READ-ONLY/),
      'project-far',
      'project-near',
    ]);
    expect(result.allAgents).toHaveLength(3 + 2 + 3 + 5 + 2 + 1);
  });

  it('names plugin agents plugin:name and records the plugin', async () => {
    const result = await load();
    const pluginAgent = result.allAgents.find((agent) => agent.agentType === 'acme:x');
    expect(pluginAgent).toMatchObject({
      source: 'plugin',
      plugin: 'acme',
      baseDir: join(plugin, 'agents'),
    });
  });

  it('does not load agents above the repository root', async () => {
    await agentFile(join(root, '.claude', 'agents', 'outside.md'), 'outside', 'outside');
    const result = await load({ homeDir: join(root, 'other-home') });
    expect(result.allAgents.some((agent) => agent.agentType === 'outside')).toBe(false);
  });

  it('takes the new definitions only after the cache is cleared', async () => {
    const first = await load();
    await agentFile(join(cwd, '.claude', 'agents', 'late.md'), 'late', 'project');
    const second = await load();
    expect(second.allAgents.map((agent) => agent.agentType)).toEqual(
      first.allAgents.map((agent) => agent.agentType),
    );
    clearAgentDefinitionsCache(join(root, 'elsewhere'));
    expect((await load()).activeAgents.some((agent) => agent.agentType === 'late')).toBe(false);
    clearAgentDefinitionsCache(cwd);
    expect((await load()).activeAgents.some((agent) => agent.agentType === 'late')).toBe(true);
  });

  it('caches per set of options', async () => {
    expect(
      (await load()).activeAgents.find((agent) => agent.agentType === 'Plan')?.getSystemPrompt(),
    ).toBe('project');
    expect(
      (await load({ flagAgents })).activeAgents
        .find((agent) => agent.agentType === 'Plan')
        ?.getSystemPrompt(),
    ).toBe('flag');
    expect(
      (await load({ policyDir: join(root, 'none') })).activeAgents
        .find((agent) => agent.agentType === 'shared')
        ?.getSystemPrompt(),
    ).toBe('project');
  });

  it('returns arrays a caller may change without changing the cache', async () => {
    const first = await load();
    first.activeAgents.length = 0;
    first.diagnostics.push({ filePath: 'x', reason: 'y', severity: 'error' });
    const second = await load();
    expect(second.activeAgents.length).toBeGreaterThan(0);
    expect(second.diagnostics.some((diagnostic) => diagnostic.filePath === 'x')).toBe(false);
  });
});

describe('getAgentDefinitionsWithOverrides sources', () => {
  it('gives only the built-ins, with no diagnostics, when no directory exists', async () => {
    const result = await load({ cwd: join(root, 'nowhere') });
    expect(result.activeAgents.map((agent) => agent.agentType)).toEqual([
      'general-purpose',
      'Explore',
      'Plan',
    ]);
    expect(result.diagnostics).toEqual([]);
  });

  it('loads every folder from cwd up to the home directory when no ancestor holds .git, as Claude Code does', async () => {
    const projects = join(home, 'projects');
    const inner = join(projects, 'plain', 'inner');
    await agentFile(join(projects, 'plain', '.claude', 'agents', 'parent.md'), 'parent', 'parent');
    await agentFile(join(inner, '.delegate', 'agents', 'here.md'), 'here', 'here');
    await agentFile(join(projects, '.claude', 'agents', 'top.md'), 'top', 'top');
    await agentFile(join(home, '.claude', 'agents', 'mine.md'), 'mine', 'user');
    await agentFile(join(root, '.claude', 'agents', 'above.md'), 'above', 'above home');
    const result = await load({ cwd: inner });
    const sources = Object.fromEntries(
      result.allAgents.map((agent) => [agent.agentType, agent.source]),
    );
    expect(sources).toMatchObject({
      here: 'projectSettings',
      parent: 'projectSettings',
      top: 'projectSettings',
      // The home directory is the user's, never a project level; nothing above it is read.
      mine: 'userSettings',
    });
    expect(sources).not.toHaveProperty('above');
    expect(result.allAgents.filter((agent) => agent.agentType === 'mine')).toHaveLength(1);
  });

  it('lets the project folder nearest cwd win, as Claude Code does, and names both files', async () => {
    const near = join(cwd, '.claude', 'agents', 'reviewer.md');
    const far = join(repo, '.claude', 'agents', 'reviewer.md');
    await agentFile(near, 'reviewer', 'near');
    await agentFile(far, 'reviewer', 'far');
    const result = await load();
    const active = result.activeAgents.find((agent) => agent.agentType === 'reviewer');
    expect(active?.getSystemPrompt()).toBe('near');
    expect(active?.filePath).toBe(near);
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        filePath: near,
        severity: 'warning',
        reason: expect.stringContaining(
          `is defined both in ${far} and in ${near}; Delegate uses ${near}, because the project folder nearest the working directory wins`,
        ),
      }),
    ]);
    expect(result.diagnostics[0]?.reason).toContain(', as Claude Code does — rename one of them');
  });

  it('lets the nearest of three project levels win, as Claude Code does', async () => {
    const levels = { root: repo, middle: join(repo, 'packages'), near: cwd };
    for (const [level, directory] of Object.entries(levels))
      await agentFile(join(directory, '.claude', 'agents', 'shared.md'), 'shared', level);
    await agentFile(join(repo, '.claude', 'agents', 'two.md'), 'two', 'root');
    await agentFile(join(levels.middle, '.claude', 'agents', 'two.md'), 'two', 'middle');
    const result = await load({ pluginDirs: [], policyDir: join(root, 'none') });
    const prompt = (type: string): string | undefined =>
      result.activeAgents.find((agent) => agent.agentType === type)?.getSystemPrompt();
    expect(prompt('shared')).toBe('near');
    expect(prompt('two')).toBe('middle');
  });

  it('keeps user agents below project agents whichever level the project file is at', async () => {
    await agentFile(join(home, '.claude', 'agents', 'mine.md'), 'mine', 'user');
    await agentFile(join(repo, '.claude', 'agents', 'mine.md'), 'mine', 'root');
    const result = await load({ pluginDirs: [], policyDir: join(root, 'none') });
    const active = result.activeAgents.find((agent) => agent.agentType === 'mine');
    expect(active).toMatchObject({
      source: 'projectSettings',
      filePath: join(repo, '.claude', 'agents', 'mine.md'),
    });
  });

  it('lets a nearer .claude/agents file beat a farther .delegate/agents one', async () => {
    await agentFile(join(repo, '.delegate', 'agents', 'mixed.md'), 'mixed', 'root delegate');
    await agentFile(join(cwd, '.claude', 'agents', 'mixed.md'), 'mixed', 'near claude');
    const result = await load({ pluginDirs: [], policyDir: join(root, 'none') });
    expect(
      result.activeAgents.find((agent) => agent.agentType === 'mixed')?.getSystemPrompt(),
    ).toBe('near claude');
  });

  it('passes exploreModel to the built-in Explore agent', async () => {
    const result = await load({ exploreModel: 'inherit' });
    expect(result.activeAgents.find((agent) => agent.agentType === 'Explore')?.model).toBe(
      'inherit',
    );
  });

  it('accepts --agents as JSON text and reports bad JSON without losing the files', async () => {
    await agentFile(join(home, '.claude', 'agents', 'mine.md'), 'mine', 'user');
    const good = await load({
      flagAgents: JSON.stringify({
        quick: { description: 'Quick.', prompt: 'Be quick.', model: 'haiku' },
      }),
    });
    expect(good.activeAgents.find((agent) => agent.agentType === 'quick')).toMatchObject({
      source: 'flagSettings',
      model: 'haiku',
      baseDir: cwd,
    });
    const bad = await load({ flagAgents: '{ not json' });
    expect(bad.diagnostics).toEqual([
      expect.objectContaining({
        filePath: '--agents',
        severity: 'error',
        reason: expect.stringMatching(/not valid JSON/),
      }),
    ]);
    expect(bad.activeAgents.some((agent) => agent.agentType === 'mine')).toBe(true);
    const notObject = await load({ flagAgents: ['a'] });
    expect(notObject.diagnostics[0]?.reason).toMatch(/must be a JSON object/);
  });

  it('warns when two --agents names are one type once trimmed, and uses the later', async () => {
    const result = await load({
      flagAgents: {
        a: { description: 'Reads.', prompt: 'Read only.', tools: ['Read'] },
        ' a ': { description: 'Does all.', prompt: 'Everything.' },
      },
    });
    const active = result.activeAgents.find((agent) => agent.agentType === 'a');
    expect(active?.whenToUse).toBe('Does all.');
    expect(result.diagnostics).toContainEqual(
      expect.objectContaining({
        filePath: '--agents',
        severity: 'warning',
        reason: expect.stringContaining('--agents defines "a" twice (as "a" and " a ")'),
      }),
    );
  });

  it('keeps loading other sources when files in one are broken', async () => {
    await agentFile(join(home, '.claude', 'agents', 'ok.md'), 'ok', 'user');
    await mkdir(join(repo, '.claude', 'agents'), { recursive: true });
    await writeFile(join(repo, '.claude', 'agents', 'broken.md'), '---\nname: [\n---\n');
    await agentFile(join(policy, 'managed.md'), 'managed', 'policy');
    const result = await load({ flagAgents: { bad: { description: 'no prompt' } } });
    expect(result.activeAgents.map((agent) => agent.agentType)).toEqual(
      expect.arrayContaining(['ok', 'managed']),
    );
    expect(result.diagnostics.map((diagnostic) => diagnostic.filePath)).toEqual([
      join(repo, '.claude', 'agents', 'broken.md'),
      '--agents',
    ]);
  });

  it('warns when .claude/agents and .delegate/agents of one directory define the same type, and the .delegate one wins', async () => {
    await agentFile(join(home, '.claude', 'agents', 'dup.md'), 'dup', 'claude');
    await agentFile(join(home, '.delegate', 'agents', 'dup.md'), 'dup', 'delegate');
    const result = await load();
    expect(result.activeAgents.find((agent) => agent.agentType === 'dup')?.getSystemPrompt()).toBe(
      'delegate',
    );
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        filePath: join(home, '.delegate', 'agents', 'dup.md'),
      }),
    ]);
  });

  it('names a plugin from plugin.json or its directory, and warns about a broken manifest', async () => {
    const named = join(root, 'plugins', 'second');
    await mkdir(named, { recursive: true });
    await writeFile(join(named, 'plugin.json'), JSON.stringify({ name: 'beta' }));
    await agentFile(join(named, 'agents', 'a.md'), 'a', 'beta');
    const unnamed = join(root, 'plugins', 'gamma');
    await agentFile(join(unnamed, 'agents', 'a.md'), 'a', 'gamma');
    const broken = join(root, 'plugins', 'delta');
    await mkdir(join(broken, '.claude-plugin'), { recursive: true });
    await writeFile(join(broken, '.claude-plugin', 'plugin.json'), '{ nope');
    await agentFile(join(broken, 'agents', 'a.md'), 'a', 'delta');
    const result = await load({ pluginDirs: [named, unnamed, broken] });
    const pluginTypes = result.activeAgents
      .filter((agent) => agent.source === 'plugin')
      .map((agent) => agent.agentType);
    expect(pluginTypes).toEqual(['beta:a', 'gamma:a', 'delta:a']);
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        reason: expect.stringMatching(/not valid JSON/),
      }),
    ]);
  });

  it('loads a home directory that is also the repository root once, as user agents', async () => {
    await agentFile(join(repo, '.claude', 'agents', 'mine.md'), 'mine', 'home');
    const result = await load({ homeDir: repo });
    const mine = result.allAgents.filter((agent) => agent.agentType === 'mine');
    expect(mine.map((agent) => agent.source)).toEqual(['userSettings']);
    expect(result.diagnostics).toEqual([]);
  });

  it('loads a home directory reached through a symbolic link to the repository root once, as user agents', async () => {
    await agentFile(join(repo, '.claude', 'agents', 'mine.md'), 'mine', 'home');
    await symlink(repo, join(root, 'home-link'));
    const result = await load({ homeDir: join(root, 'home-link') });
    const mine = result.allAgents.filter((agent) => agent.agentType === 'mine');
    expect(mine.map((agent) => agent.source)).toEqual(['userSettings']);
  });

  it('loads no user agents when HOME is empty, rather than taking the project for the home', async () => {
    await agentFile(join(cwd, '.claude', 'agents', 'local.md'), 'local', 'project');
    const saved = process.env['HOME'];
    process.env['HOME'] = '';
    try {
      const result = await getAgentDefinitionsWithOverrides({ cwd });
      const local = result.allAgents.filter((agent) => agent.agentType === 'local');
      expect(local.map((agent) => agent.source)).toEqual(['projectSettings']);
      expect(result.diagnostics).toContainEqual(
        expect.objectContaining({
          severity: 'warning',
          reason: expect.stringContaining('the home directory is not known'),
        }),
      );
    } finally {
      process.env['HOME'] = saved;
    }
  });

  it('refuses a missing cwd with a DelegateError', async () => {
    await expect(getAgentDefinitionsWithOverrides({ cwd: '' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('getAgentDefinitionsWithOverrides on an untrusted repository', () => {
  it('does not read agent files a repository links to from outside it', async () => {
    const outside = join(root, 'private');
    await agentFile(join(outside, 'secret.md'), 'secret', 'private prompt');
    await mkdir(join(repo, '.claude', 'agents'), { recursive: true });
    await symlink(join(outside, 'secret.md'), join(repo, '.claude', 'agents', 'secret.md'));
    await mkdir(join(cwd, '.claude'), { recursive: true });
    await symlink(outside, join(cwd, '.claude', 'agents'));
    const result = await load();
    expect(result.allAgents.some((agent) => agent.agentType === 'secret')).toBe(false);
    expect(
      result.diagnostics.filter((diagnostic) => /outside/.test(diagnostic.reason)),
    ).toHaveLength(2);
  });

  it('says so when a repository replaces a built-in or names an agent like one', async () => {
    await agentFile(join(repo, '.claude', 'agents', 'gp.md'), 'general-purpose', 'hijacked');
    await agentFile(join(repo, '.claude', 'agents', 'explore.md'), 'explore', 'lookalike');
    const result = await load();
    expect(
      result.diagnostics.map((diagnostic) => [diagnostic.severity, diagnostic.agentType]),
    ).toEqual([
      ['warning', 'general-purpose'],
      ['warning', 'explore'],
    ]);
  });

  it('reports --agents JSON whose getters throw instead of failing the load', async () => {
    const flagAgents = {
      get bad(): unknown {
        throw new Error('boom');
      },
    };
    const result = await load({ flagAgents });
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ filePath: '--agents', reason: expect.stringMatching(/boom/) }),
    ]);
  });
});
