import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { explainUnknownAgentType } from './explain-unknown-agent-type.js';
import { formatAgentDiagnostic } from './format-agent-diagnostic.js';
import {
  clearAgentDefinitionsCache,
  getAgentDefinitionsWithOverrides,
} from './get-agent-definitions-with-overrides.js';
import { MAX_AGENTS_DIRECTORY_DEPTH } from './list-markdown-files.js';
import { MAX_AGENT_FILE_BYTES } from './read-agent-file.js';
import { loadAgentsFromDirectories } from './load-agents-from-directories.js';
import { readPluginName } from './load-plugin-agents.js';
import { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';
import { MAX_FRONTMATTER_LENGTH } from './parse-frontmatter-yaml.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'agent-defs-untrusted-'));
});
afterEach(async () => {
  clearAgentDefinitionsCache();
  await rm(root, { recursive: true, force: true });
});

/**
 * Runs `work` and returns the longest time the event loop went without a turn meanwhile,
 * measured by a 10 ms interval, the wait from its last turn to the end included (a work that
 * never yields has no turn at all, and a delay histogram would record nothing).
 */
async function measureLoopGaps<T>(
  work: () => Promise<T>,
): Promise<{ result: T; maxGapMs: number }> {
  let last = performance.now();
  let maxGapMs = 0;
  const interval = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await work();
    maxGapMs = Math.max(maxGapMs, performance.now() - last);
    return { result, maxGapMs };
  } finally {
    clearInterval(interval);
  }
}

describe('plugin manifests go through the confined reader', () => {
  it('does not hang on a plugin.json that is a FIFO', { timeout: 10_000 }, async () => {
    const plugin = join(root, 'fifo-plugin');
    await mkdir(plugin);
    execFileSync('mkfifo', [join(plugin, 'plugin.json')]);
    const name = await readPluginName(plugin);
    expect(name.name).toBe('fifo-plugin');
    expect(name.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        reason: expect.stringMatching(/not a regular file/),
      }),
    ]);
  });

  it('refuses a plugin.json that links to /dev/zero without reading it', async () => {
    const plugin = join(root, 'zero-plugin');
    await mkdir(join(plugin, '.claude-plugin'), { recursive: true });
    await symlink('/dev/zero', join(plugin, '.claude-plugin', 'plugin.json'));
    const before = process.memoryUsage().rss;
    const name = await readPluginName(plugin);
    expect(name.name).toBe('zero-plugin');
    expect(name.diagnostics[0]?.reason).toMatch(/not a regular file/);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a plugin.json over the size limit', async () => {
    const plugin = join(root, 'big-plugin');
    await mkdir(plugin);
    await writeFile(
      join(plugin, 'plugin.json'),
      `{"name": "big", "pad": "${'x'.repeat(100_000)}"}`,
    );
    expect((await readPluginName(plugin)).diagnostics[0]?.reason).toMatch(
      /over the 65536-byte limit/,
    );
  });
});

describe('a parse budget for definition files', () => {
  it('fails each deeply nested file with a clear diagnostic and keeps the event loop responsive', async () => {
    const directory = join(root, 'agents');
    await mkdir(directory);
    const fill = (unit: string, length: number): string =>
      unit.repeat(Math.floor(length / unit.length));
    const files: Record<string, string> = {
      'flow-lists.md': `---\nname: a\ndescription: d\nx: ${'['.repeat(400_000)}${']'.repeat(400_000)}\n---\n`,
      'flow-maps.md': `---\nname: b\ndescription: d\nx: ${'{a: '.repeat(200_000)}1${'}'.repeat(200_000)}\n---\n`,
      'deep-under-cap.md': `---\nname: c\ndescription: d\nx: ${'['.repeat(40)}${']'.repeat(40)}\n---\n`,
      // The worst shape still inside the limits: as long and as deep as allowed.
      'at-the-limits.md': `---\nname: e\ndescription: d\nx: [${fill(`${'['.repeat(30)}${']'.repeat(30)}, `, MAX_FRONTMATTER_LENGTH - 200)}]\n---\nBody.`,
    };
    for (let copy = 0; copy < 3; copy++) {
      for (const [file, content] of Object.entries(files)) {
        await writeFile(join(directory, `${copy}-${file}`), content);
      }
    }
    const { result: loaded, maxGapMs } = await measureLoopGaps(() =>
      loadAgentsFromDirectories({ directories: [directory], source: 'userSettings' }),
    );
    expect(loaded.agents.map((agent) => agent.agentType)).toEqual(['e', 'e', 'e']);
    const reasons = loaded.failed.map((failed) => failed.diagnostic.reason);
    expect(reasons).toHaveLength(9);
    for (const reason of reasons) {
      expect(reason).toMatch(
        new RegExp(
          `over the ${MAX_FRONTMATTER_LENGTH}-character limit|nests more than 32 levels deep`,
        ),
      );
    }
    // Seconds per file before the limits; a generous bound keeps this test free of load noise.
    expect(maxGapMs).toBeLessThan(1000);
  });
});

describe('a repository of heavy agent files at many levels', () => {
  it('leaves the event loop a turn between slices, whatever the number of folders loading at once', async () => {
    // Valid files under every limit, each a quarter of a megabyte of hooks (tens of ms to
    // parse), in three nested project levels that all load at the same time.
    const hooks = Array.from(
      { length: 2900 },
      (_, index) =>
        `    - matcher: M${index}\n      hooks:\n        - type: command\n          command: echo ${index}`,
    ).join('\n');
    execFileSync('git', ['init', '-q', root]);
    let directory = root;
    for (let level = 0; level < 3; level++) {
      const agents = join(directory, '.claude', 'agents');
      await mkdir(agents, { recursive: true });
      for (let file = 0; file < 40; file++) {
        await writeFile(
          join(agents, `heavy-${file}.md`),
          `---\nname: heavy-${level}-${file}\ndescription: d\nhooks:\n  PreToolUse:\n${hooks}\n---\nBody.\n`,
        );
      }
      directory = join(directory, `level-${level}`);
    }
    await mkdir(directory, { recursive: true });
    const { result: loaded, maxGapMs } = await measureLoopGaps(() =>
      getAgentDefinitionsWithOverrides({ cwd: directory, homeDir: join(root, 'no-home') }),
    );
    expect(loaded.failedAgents).toEqual([]);
    expect(
      loaded.activeAgents.filter((agent) => agent.agentType.startsWith('heavy-')),
    ).toHaveLength(120);
    // All of it in one turn takes seconds; one slice and one file, a fraction of that. The
    // bound is generous, so load on the machine does not fail the test.
    expect(maxGapMs).toBeLessThan(1000);
  }, 60_000);
});

describe('diagnostics quote at most 40 characters of a file', () => {
  const token = fc.stringMatching(/^[a-z0-9]{60,120}$/);
  const templates: Array<(text: string) => string> = [
    (text) => `---\nname: ${text}:x\ndescription: d\n---\n`,
    (text) => `---\nname: a\ndescription: ${text}\n  user: ${text}\n---\n`,
    (text) => `---\nname: a\ndescription: ${text}\nonto col zero ${text}\n---\n`,
    (text) => `---\nname: a\ndescription: d\ntools: {${text}: 1}\n---\n`,
    (text) => `---\nname: a\ndescription: d\ntools: ${text} ${text}\n---\nB`,
    (text) => `---\nname: a\ndescription: d\ntools: [${text}, 3]\n---\nB`,
    (text) => `---\nname: a\ndescription: d\n${text}: 1\n---\nB`,
    (text) => `---\nname: a\ndescription: d\ncolor: ${text}\nmodel: [${text}]\n---\nB`,
    (text) =>
      `---\nname: a\ndescription: d\nhooks: {${text}: [{hooks: [{type: ${text}}]}]}\n---\nB`,
    (text) => `---\nname: a\ndescription: d\nx: *${text}\n---\nB`,
    (text) => `---\nname: a\ndescription: "${text}\n${text}"\n---\nB`,
    (text) => `---\nname: "${text}\\u0007"\ndescription: d\n---\nB`,
    (text) => `# ${text}\n\n---\nname: ${text}\ndescription: d\n---\n`,
    (text) => `---\nname: a\ndescription: d\nx: !${text} y\nname: ${text}\n---\nB`,
  ];

  it('for every kind of problem', () => {
    fc.assert(
      fc.property(token, fc.integer({ min: 0, max: templates.length - 1 }), (text, index) => {
        const content = (templates[index] ?? templates[0])?.(text) ?? '';
        const result = parseAgentFromMarkdown({
          filePath: '/a/x.md',
          baseDir: '/a',
          content,
          source: 'userSettings',
        });
        const reasons = result.ok
          ? result.warnings.map((warning) => warning.reason)
          : [result.diagnostic.reason];
        for (const reason of reasons) {
          for (let start = 0; start + 41 <= text.length; start++) {
            expect(reason.includes(text.slice(start, start + 41)), reason).toBe(false);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('deep agent folders', () => {
  it(`warns about folders more than ${MAX_AGENTS_DIRECTORY_DEPTH} levels deep instead of skipping them silently`, async () => {
    const directory = join(root, 'agents');
    let folder = directory;
    for (let level = 1; level <= MAX_AGENTS_DIRECTORY_DEPTH + 2; level++) {
      folder = join(folder, `l${level}`);
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `a${level}.md`), `---\nname: a${level}\ndescription: d\n---\nB`);
    }
    const loaded = await loadAgentsFromDirectories({
      directories: [directory],
      source: 'userSettings',
    });
    expect(loaded.agents).toHaveLength(MAX_AGENTS_DIRECTORY_DEPTH);
    expect(loaded.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        filePath: expect.stringMatching(new RegExp(`l${MAX_AGENTS_DIRECTORY_DEPTH + 1}$`)),
        reason: expect.stringMatching(/more than 16 levels below .* were not searched/),
      }),
    ]);
  });
});

describe('files that failed to load', () => {
  it('are listed with the agent type they would have defined, and explain an unknown type', async () => {
    const home = join(root, 'home');
    const agents = join(home, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    await writeFile(
      join(agents, 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews code\n  examples: many\ntools: Read\n---\nBody',
    );
    await writeFile(join(agents, 'good.md'), '---\nname: good\ndescription: Fine.\n---\nBody');
    const result = await getAgentDefinitionsWithOverrides({ cwd: root, homeDir: home });
    expect(result.activeAgents.some((agent) => agent.agentType === 'reviewer')).toBe(false);
    expect(result.failedAgents).toEqual([
      expect.objectContaining({
        agentType: 'reviewer',
        filePath: join(agents, 'reviewer.md'),
        source: 'userSettings',
        diagnostic: expect.objectContaining({ severity: 'error', line: 4 }),
      }),
    ]);
    const message = explainUnknownAgentType('reviewer', result.failedAgents);
    expect(message).toBe(
      `Agent type "reviewer" is not available because its definition failed to load: ${join(agents, 'reviewer.md')}:4: error: the value of \`description\` continues on line 4 with "examples: many", which YAML reads as a new key; quote the value or use a block scalar (|). Fix the file and reload the agents.`,
    );
    expect(explainUnknownAgentType('good', result.failedAgents)).toBeUndefined();
    expect(formatAgentDiagnostic({ filePath: '/x.md', severity: 'info', reason: 'r' })).toBe(
      '/x.md: info: r',
    );
  });

  it('match a frontmatter indented as a whole, and a file with no readable name by its file name', async () => {
    const home = join(root, 'home');
    const agents = join(home, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    // Indented as a whole, with a nested `name:` deeper that must not count.
    await writeFile(
      join(agents, 'queue.md'),
      '---\n  name: sqs-expert\n description: Queues.\n  hooks:\n    name: inner\n---\nBody',
    );
    await writeFile(
      join(agents, 'huge.md'),
      `---\nname: huge\ndescription: Big.\n---\n${'x'.repeat(MAX_AGENT_FILE_BYTES)}`,
    );
    const result = await getAgentDefinitionsWithOverrides({ cwd: root, homeDir: home });
    expect(result.failedAgents.map((entry) => entry.agentType ?? null).toSorted()).toEqual([
      null,
      'sqs-expert',
    ]);
    expect(explainUnknownAgentType('sqs-expert', result.failedAgents)).toContain(
      `because its definition failed to load: ${join(agents, 'queue.md')}:`,
    );
    expect(explainUnknownAgentType('inner', result.failedAgents)).toBeUndefined();
    expect(explainUnknownAgentType('huge', result.failedAgents)).toContain(
      `Agent type "huge" is not available; a file named after it, which may have defined it, failed to load: ${join(agents, 'huge.md')}: error:`,
    );
    expect(explainUnknownAgentType('hug', result.failedAgents)).toBeUndefined();
  });
});
