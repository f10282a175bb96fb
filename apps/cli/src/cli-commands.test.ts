import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AddressInfo, createServer } from 'node:net';
import { createInterface } from 'node:readline';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch, policy, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

const run = (args: string[]) => runCli(args, { cwd: scratch.project, home: scratch.home });

async function writeAgent(name: string, content: string): Promise<string> {
  const directory = join(scratch.project, '.claude', 'agents');
  await mkdir(directory, { recursive: true });
  const path = join(directory, name);
  await writeFile(path, content);
  return path;
}

describe('delegate agents', () => {
  it('lists the effective agents with source, model and tools after the gates, foreground and background', async () => {
    await writeAgent(
      'reviewer.md',
      '---\nname: reviewer\ndescription: Reviews.\nmodel: haiku\ntools: Read, Grep, Bash\n---\nReview.',
    );
    const result = await run(['agents', 'list', '--json']);
    expect(result.code).toBe(0);
    const { agents } = JSON.parse(result.stdout) as {
      agents: Array<{
        name: string;
        source: string;
        model: string;
        active: boolean;
        tools: { foreground: string[]; background: string[] };
      }>;
    };
    const byName = new Map(agents.map((agent) => [agent.name, agent]));
    expect(byName.get('reviewer')).toMatchObject({
      source: 'projectSettings',
      model: 'haiku',
      active: true,
    });
    expect(byName.get('reviewer')?.tools.foreground.sort()).toEqual(['Bash', 'Grep', 'Read']);
    expect(byName.get('Explore')?.tools.foreground).not.toContain('Write');
    expect(byName.get('general-purpose')?.tools.foreground).toContain('Write');
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.project, '.delegate', 'settings.json'),
      JSON.stringify({ permissions: { deny: ['Agent(reviewer)'] } }),
    );
    const denied = JSON.parse((await run(['agents', 'list', '--json'])).stdout) as {
      agents: Array<{ name: string; deniedBy: string | null }>;
    };
    expect(denied.agents.find((agent) => agent.name === 'reviewer')?.deniedBy).toBe(
      'Agent(reviewer) from projectSettings',
    );
    expect(denied.agents.find((agent) => agent.name === 'Explore')?.deniedBy).toBeNull();
    const badFlag = await run(['agents', 'list', '--agents', '{"helper": {"prompt": "p"}}']);
    expect(badFlag.code).toBe(0);
    expect(badFlag.stderr).toContain('--agents: error: agent "helper" needs a "description"');
    const text = await run(['agents', 'list']);
    expect(text.stdout).toContain('denied by Agent(reviewer)');
    expect(text.stdout).toMatch(/reviewer\s+projectSettings/);
    expect(text.stdout).toContain('tools (background)');
  });

  it('shows one agent with its resolved definition and system prompt', async () => {
    await writeAgent(
      'reviewer.md',
      '---\nname: reviewer\ndescription: Reviews diffs.\ncolor: green\n---\nYou review diffs carefully.',
    );
    const shown = await run(['agents', 'show', 'reviewer']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('You review diffs carefully.');
    expect(shown.stdout).toContain('color:       green');
    const json = JSON.parse((await run(['agents', 'show', 'reviewer', '--json'])).stdout) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({
      agentType: 'reviewer',
      whenToUse: 'Reviews diffs.',
      systemPrompt: 'You review diffs carefully.',
    });
    const missing = await run(['agents', 'show', 'nobody']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Available:');
  });

  it('shows the MCP servers an agent names and those it starts itself', async () => {
    const agents = join(scratch.home, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    await writeFile(
      join(agents, 'echoer.md'),
      [
        '---',
        'name: echoer',
        'description: Echoes.',
        'mcpServers:',
        '  - github',
        '  - echo:',
        '      command: node',
        '      args: [server.mjs, --quiet]',
        '---',
        'Echo.',
      ].join('\n'),
    );
    const shown = await run(['agents', 'show', 'echoer']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      "mcp servers: github (the session's); echo (its own, started for each run: node server.mjs --quiet)",
    );
  });

  it('says first why an agent whose file did not load is missing, not after the list of every agent', async () => {
    for (let index = 0; index < 40; index++) {
      await writeAgent(
        `helper-${index}.md`,
        `---\nname: helper-${index}\ndescription: Helps.\n---\nHelp.`,
      );
    }
    const broken = await writeAgent(
      'planner.md',
      '---\nname: planner\ndescription: Plans. Examples:\\n<example>\nuser: "Plan it"\nassistant: "I will."\n<commentary>\nWhy.\n</commentary>\n---\nPlan.',
    );
    const shown = await run(['agents', 'show', 'planner']);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain(
      `Agent type "planner" is not available because its definition failed to load: ${broken}:6: error: line 6 ("<commentary>")`,
    );
    expect(shown.stderr).not.toContain('helper-0');
  });

  it('validates agent files: each problem as path:line: severity: message, exit 1 on an error', async () => {
    const good = await writeAgent('good.md', '---\nname: good\ndescription: Fine.\n---\nOk.');
    const noName = await writeAgent('no-name.md', '---\ndescription: Has no name.\n---\nBody');
    const badYaml = await writeAgent(
      'bad-yaml.md',
      '---\nname: broken\ndescription: Use this agent when\n  the user says: review\n---\nBody',
    );
    const result = await run(['agents', 'validate']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(`${noName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:\\d+)?: error: `),
    );
    expect(result.stdout).toMatch(
      new RegExp(
        `${badYaml.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4: error: .*continues on line 4`,
      ),
    );
    expect(result.stdout).not.toContain(`${good}:`);
    const json = JSON.parse((await run(['agents', 'validate', '--json'])).stdout) as {
      ok: boolean;
      errors: number;
    };
    expect(json).toMatchObject({ ok: false, errors: 2 });
    const one = await run(['agents', 'validate', good]);
    expect(one.code).toBe(0);
    const folder = await run(['agents', 'validate', join(scratch.project, '.claude', 'agents')]);
    expect(folder.code).toBe(1);
  });

  it('validates --agents definitions as `delegate run` reads them, with or without paths', async () => {
    const good = await writeAgent('good.md', '---\nname: good\ndescription: Fine.\n---\nOk.');
    const problem = '--agents: error: agent "x" needs a "description" (text saying when to use it)';
    const flagOnly = await run(['agents', 'validate', '--agents', '{"x":{}}']);
    expect(flagOnly.code).toBe(1);
    expect(flagOnly.stdout).toContain(problem);
    const withPath = await run(['agents', 'validate', good, '--agents', '{"x":{}}']);
    expect(withPath.code).toBe(1);
    expect(withPath.stdout.trim()).toBe(problem);
    expect((await run(['agents', 'validate', good])).code).toBe(0);
    const file = join(scratch.root, 'agents.json');
    await writeFile(file, '{"fine": {"description": "Fine.", "prompt": "Ok."}}');
    expect((await run(['agents', 'validate', '--agents', file])).code).toBe(0);
    // Text that is not JSON is the usage error `run` gives.
    const broken = await run(['agents', 'validate', '--agents', '{nope']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('--agents: not valid JSON');
    // A run's warning points at the command that lists these problems.
    const ran = await run(['run', '--sim', '--agents', '{"x":{}}', 'hi']);
    expect(ran.stderr).toContain(problem);
    expect(ran.stderr).toContain(
      '1 agent file not loaded; `delegate agents validate` with the same `--agents` lists every problem.',
    );
  });

  it("validates a plugin, its agents folder or one of its files by Claude Code's plugin rules", async () => {
    // A plugin's agent may leave out `name` (it is named after the file); the same file in
    // .claude/agents is not an agent.
    const plugin = join(scratch.root, 'acme-plugin');
    await mkdir(join(plugin, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(plugin, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'acme' }),
    );
    await mkdir(join(plugin, 'agents', 'review'), { recursive: true });
    const unnamed = join(plugin, 'agents', 'review', 'deep.md');
    await writeFile(unnamed, '---\ndescription: Reviews deeply.\n---\nReview.');
    const privileged = join(plugin, 'agents', 'privileged.md');
    await writeFile(
      privileged,
      '---\nname: privileged\ndescription: Wants more.\npermissionMode: bypassPermissions\n---\nMore.',
    );
    for (const path of [plugin, join(plugin, 'agents'), unnamed]) {
      const result = await run(['agents', 'validate', path]);
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain('missing `name`');
    }
    const whole = await run(['agents', 'validate', plugin]);
    expect(whole.stdout).toContain(
      `${privileged}:4: warning: \`permissionMode\` is ignored in a plugin's agent file`,
    );
    const one = await run(['agents', 'validate', unnamed]);
    expect(one.stdout).not.toContain(privileged);
    expect(one.stderr).toContain('0 errors, 0 warnings');
    // Outside a plugin the file is refused, as Claude Code refuses it.
    const copy = await writeAgent('deep.md', '---\ndescription: Reviews deeply.\n---\nReview.');
    const outside = await run(['agents', 'validate', copy]);
    expect(outside.code).toBe(1);
    expect(outside.stdout).toContain(`${copy}: error: missing \`name\`; add \`name: deep\``);
  });
});

describe('delegate agents validate <path>, read as delegate run reads it', () => {
  it('skips a project agent that links out of the project, named or in its folder', async () => {
    const outside = join(scratch.root, 'outsider.md');
    await writeFile(outside, '---\nname: outsider\ndescription: From elsewhere.\n---\nHi.');
    await mkdir(join(scratch.project, '.claude', 'agents'), { recursive: true });
    const link = join(scratch.project, '.claude', 'agents', 'outsider.md');
    await symlink(outside, link);
    for (const path of [link, join(scratch.project, '.claude', 'agents'), link]) {
      const result = await run(['agents', 'validate', path]);
      expect(result.stdout).toContain(`${link}: warning: resolves to ${outside}, outside`);
      expect(result.stderr).toContain('1 warning');
    }
    const listed = await run(['agents', 'list']);
    expect(listed.stdout).not.toContain('outsider');
  });

  it('warns that a plugin does not load a file its manifest leaves out', async () => {
    const plugin = join(scratch.root, 'listing');
    await mkdir(join(plugin, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(plugin, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'acme', agents: ['./agents/kept.md'] }),
    );
    await mkdir(join(plugin, 'agents'), { recursive: true });
    await writeFile(join(plugin, 'agents', 'kept.md'), '---\ndescription: Kept.\n---\nKept.');
    const forgotten = join(plugin, 'agents', 'forgotten.md');
    await writeFile(forgotten, '---\ndescription: Forgotten.\n---\nForgotten.');
    const result = await run(['agents', 'validate', forgotten]);
    expect(result.stdout).toContain(
      `${forgotten}: warning: not loaded: ${join(plugin, '.claude-plugin', 'plugin.json')} lists the plugin's agent files`,
    );

    // Without a list, a plugin reads only its agents/ folder.
    const bare = join(scratch.root, 'bare');
    await mkdir(join(bare, 'specialists'), { recursive: true });
    await writeFile(join(bare, 'plugin.json'), JSON.stringify({ name: 'bare' }));
    const other = join(bare, 'specialists', 'other.md');
    await writeFile(other, '---\nname: other\ndescription: Other.\n---\nOther.');
    const elsewhere = await run(['agents', 'validate', other]);
    expect(elsewhere.stdout).toContain(`${other}: warning: not loaded: a plugin's agents are`);
  });

  it('validates a folder of plugins (a marketplace) plugin by plugin', async () => {
    const market = join(scratch.root, 'market');
    await mkdir(join(market, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(market, '.claude-plugin', 'marketplace.json'),
      JSON.stringify({ name: 'm', plugins: [{ name: 'good', source: './plugins/good' }] }),
    );
    await mkdir(join(market, 'plugins', 'good', 'agents'), { recursive: true });
    await writeFile(
      join(market, 'plugins', 'good', 'agents', 'helper.md'),
      '---\ndescription: Helps.\n---\nHelp.',
    );
    // Not a marketplace entry, but a plugin folder with a manifest Claude Code refuses whole.
    const refused = join(market, 'refused');
    await mkdir(join(refused, '.claude-plugin'), { recursive: true });
    await mkdir(join(refused, 'agents'), { recursive: true });
    const manifest = join(refused, '.claude-plugin', 'plugin.json');
    await writeFile(manifest, JSON.stringify({ name: 'refused', agents: ['./agents'] }));
    await writeFile(join(refused, 'agents', 'a.md'), '---\ndescription: A.\n---\nA.');

    const result = await run(['agents', 'validate', market]);
    expect(result.stdout).toContain(`${manifest}: error:`);
    expect(result.stdout).not.toContain('missing `name`');
    expect(result.code).toBe(1);
  });
});

describe('delegate agents validate <file of a plugin manifest>', () => {
  it('reads a file the manifest lists outside agents/ as that plugin reads it', async () => {
    const plugin = join(scratch.root, 'listing-plugin');
    await mkdir(join(plugin, '.claude-plugin'), { recursive: true });
    await writeFile(
      join(plugin, '.claude-plugin', 'plugin.json'),
      JSON.stringify({ name: 'acme', agents: ['./extra/helper.md', './extra/typo.md'] }),
    );
    await mkdir(join(plugin, 'extra'), { recursive: true });
    const helper = join(plugin, 'extra', 'helper.md');
    await writeFile(helper, '---\ndescription: Helps.\n---\nHelp.');
    const typo = join(plugin, 'extra', 'typo.md');
    await writeFile(typo, '---\ndescription: Typo.\ntols: Read\n---\nTypo.');

    // Named after its file, as a plugin's agent is, not refused as a project agent without `name`.
    const one = await run(['agents', 'validate', helper]);
    expect(one.stdout).not.toContain('missing `name`');
    expect(one.stderr).toContain('0 errors, 0 warnings');
    expect(one.code).toBe(0);

    const other = await run(['agents', 'validate', typo]);
    expect(other.stdout).toContain(`${typo}:3: warning:`);
    expect(other.stdout).toContain('`tools`');
    expect(other.stdout).not.toContain(helper);
  });
});

/** Runs a prompt whose main agent starts one general-purpose helper, recorded in `transcripts`. */
async function recordHelperRun(
  transcripts: string,
): Promise<{ sessionId: string; agents: Array<{ agent_id: string }> }> {
  const recorded = await run([
    'run',
    '--sim',
    policy('spawn-general'),
    '--transcript-dir',
    transcripts,
    '--output-format',
    'json',
    'say hi via a helper',
  ]);
  const { session_id: sessionId, agents } = JSON.parse(recorded.stdout) as {
    session_id: string;
    agents: Array<{ agent_id: string }>;
  };
  return { sessionId, agents };
}

describe('delegate transcripts', () => {
  it('lists sessions and shows the main conversation and a sub-agent', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const { sessionId, agents } = await recordHelperRun(transcripts);
    const listed = JSON.parse(
      (await run(['transcripts', 'list', '--transcript-dir', transcripts, '--json'])).stdout,
    ) as {
      sessions: Array<{ sessionId: string; agents: number; firstPrompt: string }>;
    };
    expect(listed.sessions).toEqual([
      expect.objectContaining({ sessionId, agents: 1, firstPrompt: 'say hi via a helper' }),
    ]);
    const shown = await run(['transcripts', 'show', sessionId, '--transcript-dir', transcripts]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('user: say hi via a helper');
    expect(shown.stdout).toContain('assistant: The sub-agent said: hi from the sub-agent');
    const subId = agents[1]!.agent_id;
    const sub = await run([
      'transcripts',
      'show',
      sessionId,
      '--agent',
      subId,
      '--transcript-dir',
      transcripts,
      '--json',
    ]);
    const entries = JSON.parse(sub.stdout) as Array<{ type: string; isSidechain: boolean }>;
    expect(entries.map((entry) => entry.type)).toEqual(['user', 'assistant']);
    expect(entries.every((entry) => entry.isSidechain)).toBe(true);
    const missing = await run([
      'transcripts',
      'show',
      '../escape',
      '--transcript-dir',
      transcripts,
    ]);
    expect(missing.code).toBe(2);
    // Without the flag, runs and these commands use the folder the settings name.
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.project, '.delegate', 'settings.json'),
      JSON.stringify({ transcriptDir: 'logs' }),
    );
    const logged = await run(['run', '--sim', '--output-format', 'json', 'into logs']);
    const loggedId = (JSON.parse(logged.stdout) as { session_id: string }).session_id;
    const fromSettings = JSON.parse((await run(['transcripts', 'list', '--json'])).stdout) as {
      directory: string;
      sessions: Array<{ sessionId: string }>;
    };
    expect(fromSettings.directory).toBe(join(scratch.project, 'logs'));
    expect(fromSettings.sessions.map((session) => session.sessionId)).toEqual([loggedId]);
    expect((await run(['transcripts', 'show', loggedId])).stdout).toContain('user: into logs');
  });

  it('shows a session by the start of its id, and says what is there when the session or agent is not', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const { sessionId, agents } = await recordHelperRun(transcripts);
    const show = (...args: string[]) =>
      run(['transcripts', 'show', ...args, '--transcript-dir', transcripts]);
    const byStart = await show(sessionId.slice(0, 8));
    expect(byStart.code, byStart.stderr).toBe(0);
    expect(byStart.stdout).toContain('user: say hi via a helper');
    // Another session with the same start makes that start ambiguous.
    const twin = `${sessionId.slice(0, 4)}-twin`;
    await writeFile(join(transcripts, `${twin}.jsonl`), '');
    const ambiguous = await show(sessionId.slice(0, 4));
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toBe(
      `delegate: ${sessionId.slice(0, 4)} is the start of 2 sessions in ${transcripts}: ${[sessionId, twin].sort().join(', ')}. Give more of the id.\n`,
    );
    const missing = await show('nosuch');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `delegate: no session nosuch in ${transcripts}. \`delegate transcripts list\` shows the sessions there.\n`,
    );
    const noAgent = await show(sessionId.slice(0, 8), '--agent', 'nosuch');
    expect(noAgent.code).toBe(2);
    expect(noAgent.stderr).toBe(
      `delegate: --agent nosuch: session ${sessionId} has no sub-agent nosuch. Its sub-agents: ${agents[1]!.agent_id}.\n`,
    );
    for (const result of [missing, noAgent]) expect(result.stderr).not.toMatch(/ENOENT|open '/);
  });

  it('lists past a FIFO in the transcript folder and refuses to show it, instead of hanging', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    await mkdir(transcripts, { recursive: true });
    await writeFile(join(transcripts, 'kept.jsonl'), '');
    // Nobody writes to it: reading it as a file would wait forever.
    execFileSync('mkfifo', [join(transcripts, 'stray.jsonl')]);
    const listed = await run(['transcripts', 'list', '--transcript-dir', transcripts, '--json']);
    expect(listed.code).toBe(0);
    expect(
      (JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string }> }).sessions.map(
        (session) => session.sessionId,
      ),
    ).toContain('kept');
    const shown = await run(['transcripts', 'show', 'stray', '--transcript-dir', transcripts]);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toMatch(
      /stray\.jsonl is not a regular file \(a FIFO, .*\)[^.]*\. Remove it[^]*file\. `delegate transcripts list` shows/,
    );
  });
});

describe('delegate transcripts list on damaged transcripts', () => {
  it('lists the first prompt of a transcript damaged further on, and names one it cannot read', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const result = await runCli(
      [
        'run',
        '--sim',
        policy('echo-history'),
        '--transcript-dir',
        transcripts,
        '--output-format',
        'json',
        'the first prompt',
      ],
      { cwd: scratch.project, home: scratch.home },
    );
    const { session_id: sessionId } = JSON.parse(result.stdout) as { session_id: string };
    const path = join(transcripts, `${sessionId}.jsonl`);
    const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
    // Garbage after the prompt: the start of the file still reads.
    await writeFile(path, `${[...lines, 'garbage', lines.at(-1)].join('\n')}\n`);
    // Garbage first: nothing of it reads.
    await writeFile(join(transcripts, 'broken.jsonl'), `garbage\n${lines.join('\n')}\n`);
    const listed = await run(['transcripts', 'list', '--transcript-dir', transcripts, '--json']);
    const sessions = (
      JSON.parse(listed.stdout) as {
        sessions: Array<{ sessionId: string; firstPrompt?: string; problem?: string }>;
      }
    ).sessions;
    expect(sessions.find((session) => session.sessionId === sessionId)).toMatchObject({
      firstPrompt: 'the first prompt',
    });
    expect(sessions.find((session) => session.sessionId === 'broken')?.problem).toMatch(
      /broken\.jsonl:1: torn or corrupt transcript line/,
    );
    const text = await run(['transcripts', 'list', '--transcript-dir', transcripts]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/broken\s.*\(unreadable: see below\)/);
    expect(text.stderr).toMatch(/^delegate: warning: .*broken\.jsonl:1: torn or corrupt/m);
  });
});

describe('delegate transcripts show on a damaged transcript', () => {
  it('says what is wrong in its own words: a torn last line, an empty file, a folder', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const result = await runCli(
      [
        'run',
        '--sim',
        policy('echo-history'),
        '--transcript-dir',
        transcripts,
        '--output-format',
        'json',
        'first question',
      ],
      { cwd: scratch.project, home: scratch.home },
    );
    const sessionId = (JSON.parse(result.stdout) as { session_id: string }).session_id;
    const file = join(transcripts, `${sessionId}.jsonl`);
    const show = () => run(['transcripts', 'show', sessionId, '--transcript-dir', transcripts]);
    // A crash cut the last line (the answer) while it was written.
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.length - 40));
    const torn = await show();
    expect(torn.code).toBe(0);
    expect(torn.stdout).toContain('user: first question');
    expect(torn.stderr).toMatch(/^delegate: warning: .*skipped a torn last line/m);
    expect(torn.stderr).not.toContain('--trace-warnings');
    await writeFile(file, '');
    const empty = await show();
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain('(no messages)');
    await rm(file);
    await mkdir(file);
    const folder = await show();
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(file);
    expect(folder.stderr).not.toContain('..');
  });
});

describe('control characters in what the CLI shows', () => {
  it('memory list and show, transcripts show and agents show print them as ?, keeping lines and tabs', async () => {
    const hostile = 'clip \u001b]52;c;cHduZWQ=\u0007 clear \u001b[2J\u001b[H \u202eevil';
    const projectMemory = join(scratch.project, '.claude', 'agent-memory', 'reviewer');
    await mkdir(projectMemory, { recursive: true });
    await writeFile(join(projectMemory, 'MEMORY.md'), `- one\n\t- ${hostile}\n`);
    const memory = await run(['memory', 'show', 'reviewer', '--scope', 'project']);
    expect(memory.stdout).toContain('- one\n\t- clip ?]52;c;cHduZWQ=? clear ?[2J?[H ?evil\n');
    const transcripts = join(scratch.root, 'transcripts');
    const ran = await runCli(
      ['run', '--sim', '--transcript-dir', transcripts, '--output-format', 'json', hostile],
      { cwd: scratch.project, home: scratch.home },
    );
    const { session_id: sessionId } = JSON.parse(ran.stdout) as { session_id: string };
    const shown = await run(['transcripts', 'show', sessionId, '--transcript-dir', transcripts]);
    expect(shown.stdout).toContain('user: clip ?]52;c;cHduZWQ=? clear ?[2J?[H ?evil');
    await writeAgent(
      'hostile.md',
      `---\nname: hostile\ndescription: "when ${hostile.replaceAll('\u001b', '\\e').replaceAll('\u0007', '\\a')}"\n---\nprompt ${hostile}\n`,
    );
    const agent = await run(['agents', 'show', 'hostile']);
    expect(agent.stdout).toContain('when clip ?]52;c;cHduZWQ=? clear ?[2J?[H ?evil');
    expect(agent.stdout).toContain('prompt clip ?]52;c;cHduZWQ=?');
    // A folder name decodes to the agent type it was made for: here one with an escape.
    await mkdir(join(scratch.project, '.claude', 'agent-memory', '%1B%5D0%3Bpwned%07'));
    const listed = await run(['memory', 'list', '--scope', 'project']);
    expect(listed.stdout).toContain('?]0;pwned?');
    for (const text of [memory.stdout, shown.stdout, agent.stdout, listed.stdout])
      // eslint-disable-next-line no-control-regex -- finding control characters is the point
      expect(text).not.toMatch(/[\u001b\u0007\u202e]/);
  });
});

describe('delegate memory', () => {
  it('lists, shows and clears an agent memory per scope', async () => {
    const projectMemory = join(scratch.project, '.claude', 'agent-memory', 'reviewer');
    const userMemory = join(scratch.home, '.claude', 'agent-memory', 'reviewer');
    await mkdir(projectMemory, { recursive: true });
    await mkdir(userMemory, { recursive: true });
    await writeFile(join(projectMemory, 'MEMORY.md'), '- style: tabs, not spaces\n');
    await writeFile(join(userMemory, 'MEMORY.md'), '- prefers short reports\n');
    const listed = JSON.parse((await run(['memory', 'list', '--json'])).stdout) as {
      memory: Array<{ agentType: string; scope: string }>;
    };
    expect(listed.memory.map((entry) => [entry.agentType, entry.scope]).sort()).toEqual([
      ['reviewer', 'project'],
      ['reviewer', 'user'],
    ]);
    const shown = await run(['memory', 'show', 'reviewer', '--scope', 'project']);
    expect(shown.stdout).toContain('tabs, not spaces');
    expect(shown.stdout).not.toContain('short reports');
    const shownJson = JSON.parse(
      (await run(['memory', 'show', 'reviewer', '--scope', 'user', '--json'])).stdout,
    ) as { memory: Array<{ scope: string; directory: string; index?: string }> };
    expect(shownJson.memory).toEqual([
      expect.objectContaining({
        scope: 'user',
        directory: userMemory,
        index: '- prefers short reports\n',
      }),
    ]);
    const cleared = JSON.parse(
      (await run(['memory', 'clear', 'reviewer', '--scope', 'project', '--json'])).stdout,
    ) as { cleared: string[] };
    expect(cleared.cleared).toEqual(['project']);
    expect(existsSync(projectMemory)).toBe(false);
    expect(existsSync(userMemory)).toBe(true);
    const bad = await run(['memory', 'list', '--scope', 'team']);
    expect(bad.code).toBe(2);
  });

  it.each(['show', 'clear'])(
    'memory %s with an empty agent type is a usage error',
    async (command) => {
      const result = await run(['memory', command, '']);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`delegate: memory ${command} needs an agent type`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
  );
});

describe('delegate sim', () => {
  it('refuses a --host it cannot listen on, and a --port in use, as usage errors', async () => {
    const host = await run(['sim', '--host', 'bad host']);
    expect(host.code).toBe(2);
    expect(host.stderr).toContain('--host "bad host" is not an address of this machine');
    // Blank is not "every interface": it is refused before anything listens.
    for (const blank of ['', '  ']) {
      const empty = await run(['sim', '--host', blank]);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toMatch(/--host.*expected an address/);
      expect(empty.stdout).toBe('');
    }
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const busy = await run(['sim', '--port', String(port)]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain(`--port ${port}: 127.0.0.1:${port} is already in use`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('serves the simulator until SIGTERM (exit 143) or Ctrl-C (exit 130), printing its URL first', async () => {
    const child = spawn(
      process.execPath,
      [CLI_BIN, 'sim', '--port', '0', '--policy', policy('spawn-general')],
      {
        cwd: scratch.project,
        env: { ...process.env, HOME: scratch.home },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const lines = createInterface({ input: child.stdout });
      const url = await new Promise<string>((resolve) => lines.once('line', resolve));
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new Anthropic({ apiKey: 'any', baseURL: url, maxRetries: 0 });
      const message = await client.messages.create(
        {
          model: 'claude-sonnet-5-5',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hi' }],
        },
        { headers: { 'x-delegate-agent': 'general-purpose' } },
      );
      expect(message.content[0]).toMatchObject({ type: 'text', text: 'hi from the sub-agent' });
      child.kill('SIGTERM');
      // 143, as the README's exit-code table says for SIGTERM.
      expect(await exited).toBe(143);
    } finally {
      // Never leave a server behind when an expectation above fails.
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const jsonChild = spawn(process.execPath, [CLI_BIN, 'sim', '--json'], {
      cwd: scratch.project,
      env: { ...process.env, HOME: scratch.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const jsonExited = new Promise<number | null>((resolve) => jsonChild.on('close', resolve));
    try {
      const first = await new Promise<string>((resolve) =>
        createInterface({ input: jsonChild.stdout }).once('line', resolve),
      );
      const served = JSON.parse(first) as { url: string; port: number };
      expect(served.url).toBe(`http://127.0.0.1:${served.port}`);
      const client = new Anthropic({ apiKey: 'any', baseURL: served.url, maxRetries: 0 });
      const echoed = await client.messages.create({
        model: 'claude-sonnet-5-5',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'echo me' }],
      });
      expect(echoed.content[0]).toMatchObject({ type: 'text', text: 'echo me' });
      // Ctrl-C (SIGINT) exits 130.
      jsonChild.kill('SIGINT');
      expect(await jsonExited).toBe(130);
    } finally {
      if (jsonChild.exitCode === null) jsonChild.kill('SIGKILL');
    }
    const missing = await run(['sim', '--policy', join(scratch.root, 'missing.mjs')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing.mjs');
  });
});
