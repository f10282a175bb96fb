import { execFileSync, spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { rules, startSim } from '@delegate/api-sim';
import { DelegateSession } from '@delegate/runtime';
import { CLI_BIN, type Scratch, makeScratch, policy, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

const run = (
  args: string[],
  options: { input?: string; env?: Record<string, string | undefined> } = {},
) => runCli(args, { cwd: scratch.project, home: scratch.home, ...options });

/** `delegate run` on the tool-from-prompt policy: the main agent makes the one call `prompt` names. */
const runToolCall = (flags: string[], prompt: string) =>
  run(['run', '--sim', policy('tool-from-prompt'), ...flags, prompt]);

/** `delegate run --sim <policy>` that records transcripts in `transcripts`, with `args` after. */
const runRecorded = (transcripts: string, policyName: string, args: string[]) =>
  run(['run', '--sim', policy(policyName), '--transcript-dir', transcripts, ...args]);

/** A one-prompt run that records its transcript in `transcripts`; its session id. */
async function recordSession(
  transcripts: string,
  policyName: string,
  prompt: string,
): Promise<string> {
  const result = await runRecorded(transcripts, policyName, ['--output-format', 'json', prompt]);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { session_id: string }).session_id;
}

type Line = Record<string, unknown> & { type: string };

function parseLines(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Line);
}

describe('delegate run', () => {
  it('keeps the API key of the environment from the commands agents run, and out of what they return', async () => {
    const key = 'sk-ant-cli-secret-0123456789';
    const transcripts = join(scratch.root, 'transcripts');
    await writeFile(join(scratch.project, 'key.txt'), `KEY=${key}\n`);
    const command = 'echo "env:${ANTHROPIC_API_KEY:-none}"; cat key.txt';
    const result = await run(
      [
        'run',
        '--sim',
        policy('tool-from-prompt'),
        '--permission-mode',
        'bypassPermissions',
        '--transcript-dir',
        transcripts,
        `Bash ${JSON.stringify({ command })}`,
      ],
      { env: { ANTHROPIC_API_KEY: key } },
    );
    expect(result.code, result.stderr).toBe(0);
    // The command ran without the variable, and the key a file holds is redacted.
    expect(result.stdout).toContain('env:none');
    expect(result.stdout).toContain('KEY=[REDACTED]');
    const written = (await readdir(transcripts, { recursive: true }))
      .filter((name) => String(name).endsWith('.jsonl'))
      .map((name) => join(transcripts, String(name)));
    expect(written.length).toBeGreaterThan(0);
    for (const text of [
      result.stdout,
      result.stderr,
      ...(await Promise.all(written.map((file) => readFile(file, 'utf8')))),
    ])
      expect(text).not.toContain(key);
  });

  it.each(['text', 'json', 'stream-json'])(
    'prints the API key a model repeats as [REDACTED] in %s output, as transcripts have it',
    async (format) => {
      const key = 'sk-ant-cli-secret-9876543210';
      const result = await run(
        [
          'run',
          '--sim',
          policy('relay-prompt'),
          '--output-format',
          format,
          `remember my key ${key}`,
        ],
        { env: { ANTHROPIC_API_KEY: key } },
      );
      expect(result.code, result.stderr).toBe(0);
      // The answer (and, in stream-json, the sub-agent's messages and events) went through.
      expect(result.stdout).toContain('you asked: remember my key [REDACTED]');
      expect(result.stdout).not.toContain(key);
      expect(result.stderr).not.toContain(key);
    },
  );

  it('warns that a rule naming a built-in tool in another case matches no tool', async () => {
    const result = await runToolCall(
      ['--permission-mode', 'bypassPermissions', '--disallowed-tools', 'bash'],
      `Bash ${JSON.stringify({ command: 'echo ran' })}`,
    );
    expect(result.code, result.stderr).toBe(0);
    // Names match exactly, as in Claude Code: the rule stops nothing, and the person is told.
    expect(result.stdout).toContain('ran');
    expect(result.stderr).toContain(
      '--disallowed-tools: "bash" names no tool, so this deny rule denies nothing: tool names are case-sensitive. Did you mean "Bash"?',
    );
  });

  it('prints one JSON object with the answer, session, usage, cost and agents', async () => {
    const result = await run([
      'run',
      '--sim',
      policy('spawn-general'),
      '--output-format',
      'json',
      'hi',
    ]);
    expect(result.code).toBe(0);
    const value = JSON.parse(result.stdout) as Record<string, unknown> & {
      agents: Array<{
        agent_type: string;
        usage: { cache_creation_input_tokens: number };
        cost_usd: number;
        parent_agent_id: string | null;
      }>;
      usage: { output_tokens: number };
    };
    expect(value).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      exit_reason: 'completed',
    });
    expect(value['result']).toBe('The sub-agent said: hi from the sub-agent');
    expect(value['session_id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(value['num_turns']).toBe(2);
    expect(value.agents.map((agent) => agent.agent_type)).toEqual(['main', 'general-purpose']);
    expect(value.agents[1]?.parent_agent_id).toBe('main');
    // A sub-agent's report is its `result`, as the README says.
    expect(value.agents[1]).toMatchObject({ result: 'hi from the sub-agent' });
    for (const agent of value.agents) {
      expect(agent.usage.cache_creation_input_tokens).toBeGreaterThan(0);
      expect(agent.cost_usd).toBeGreaterThan(0);
    }
    const sum = value.agents.reduce((total, agent) => total + agent.cost_usd, 0);
    expect(value['total_cost_usd']).toBeCloseTo(sum, 10);
  });

  it('streams NDJSON in the claude -p stream-json shape: init first, result last, sub-agent lines under their Agent call', async () => {
    const result = await run([
      'run',
      '--sim',
      policy('spawn-general'),
      '--output-format',
      'stream-json',
      '--verbose',
      'hi',
    ]);
    expect(result.code).toBe(0);
    const lines = parseLines(result.stdout);
    expect(lines[0]).toMatchObject({
      type: 'system',
      subtype: 'init',
      model: 'claude-sonnet-5-5',
      permissionMode: 'default',
    });
    expect(lines[0]?.['tools']).toEqual(
      expect.arrayContaining(['Read', 'Bash', 'Agent', 'TaskOutput']),
    );
    expect(lines[0]?.['agents']).toEqual(
      expect.arrayContaining(['general-purpose', 'Explore', 'Plan']),
    );
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      result: 'The sub-agent said: hi from the sub-agent',
    });
    expect(typeof lines.at(-1)?.['total_cost_usd']).toBe('number');
    expect(lines.at(-1)?.['usage']).toMatchObject({ output_tokens: expect.any(Number) });
    const types = new Set(lines.map((line) => line.type));
    expect([...types].sort()).toEqual(['assistant', 'delegate_event', 'result', 'system', 'user']);
    // The main agent's Agent call, and the sub-agent's reply under it.
    const call = lines.find(
      (line) => line.type === 'assistant' && line['parent_tool_use_id'] === null,
    );
    const toolUse = (
      call?.['message'] as { content: Array<{ type: string; id: string }> }
    ).content.find((block) => block.type === 'tool_use');
    const sub = lines.filter(
      (line) => line.type === 'assistant' && line['parent_tool_use_id'] !== null,
    );
    expect(sub).toHaveLength(1);
    expect(sub[0]?.['parent_tool_use_id']).toBe(toolUse?.id);
    const events = lines
      .filter((line) => line.type === 'delegate_event')
      .map((line) => (line['event'] as { type: string }).type);
    expect(events).toEqual(expect.arrayContaining(['agent.started', 'agent.completed']));
    for (const line of lines.slice(1)) expect(line['session_id']).toBe(lines[0]?.['session_id']);
  });

  it('prints the answer on stdout and plain event lines on stderr outside a terminal', async () => {
    const result = await run(['run', '--sim', policy('spawn-general'), 'hi']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The sub-agent said: hi from the sub-agent\n');
    expect(result.stderr).toMatch(
      / started general-purpose "say hi" \(foreground, claude-sonnet-5-5\)/,
    );
    expect(result.stderr).toMatch(/ completed in /);
    expect(result.stderr).not.toContain('\u001b[');
    // One line per tool call: the main agent made one Agent call.
    expect(result.stderr.match(/ main tool Agent$/gm)).toHaveLength(1);
  });

  it('ends a text run outside a terminal with the cost table when sub-agents ran, then the one-line summary', async () => {
    const table = /^agent\s+mode\s+status\s+cache read\s+cache write\s+uncached\s+output\s+cost$/m;
    const withSubAgent = await run(['run', '--sim', policy('spawn-general'), 'hi']);
    expect(withSubAgent.code).toBe(0);
    const lines = withSubAgent.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^done · 2 turns · .* · session [0-9a-f-]{36}$/);
    expect(lines.at(-2)).toMatch(/^total\s/);
    expect(withSubAgent.stderr).toMatch(table);

    const alone = await run(['run', '--sim', 'hi']);
    expect(alone.code).toBe(0);
    expect(alone.stderr).not.toMatch(table);
    expect(alone.stderr.trimEnd().split('\n').at(-1)).toMatch(/^done · 1 turn · /);
  });

  it('says once on stderr that the transcript could not be written, naming the file and counting the writes', async () => {
    // A recorded session, resumed with a file where its sub-agents' folder should be.
    const transcripts = join(scratch.root, 'transcripts');
    const sessionId = await recordSession(transcripts, 'echo-history', 'first');
    await writeFile(join(transcripts, sessionId), 'a file, not a folder\n');
    const result = await runRecorded(transcripts, 'spawn-general', ['--resume', sessionId, 'hi']);
    // The run itself goes on: a transcript failure never stops an agent.
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The sub-agent said: hi from the sub-agent\n');
    // The CLI's summary only: not each agent's TRANSCRIPT_WRITE_FAILED warning as well.
    expect(result.stderr).not.toContain('TRANSCRIPT_WRITE_FAILED');
    expect(result.stderr.match(/could not be written/g)).toHaveLength(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^delegate: the transcript could not be written \\(\\S*${sessionId}/\\S+\\.jsonl?: [^\\n]*; [2-9]\\d* writes failed in all\\), so \`--resume \\S+\` would miss what was not written\\.`,
        'm',
      ),
    );
  });

  it('writes no escape codes to a pipe even when NO_COLOR is not set', async () => {
    const result = await run(['run', '--sim', policy('spawn-general'), 'hi'], {
      env: { NO_COLOR: undefined, TERM: 'xterm-256color' },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/ completed in /);
    expect(result.stdout + result.stderr).not.toContain('\u001b[');
  });

  it('prices each agent from the prices of a settings file, replacing the built-in table', async () => {
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    // One dollar per token written to the 5-minute cache, nothing else.
    const price = {
      inputPerMTok: 0,
      outputPerMTok: 0,
      cacheWrite5mPerMTok: 1_000_000,
      cacheWrite1hPerMTok: 0,
      cacheReadPerMTok: 0,
    };
    await writeFile(
      join(scratch.project, '.delegate', 'settings.json'),
      JSON.stringify({ prices: { 'claude-sonnet-5-5': price } }),
    );
    const result = await run([
      'run',
      '--sim',
      policy('spawn-general'),
      '--output-format',
      'json',
      'hi',
    ]);
    expect(result.code).toBe(0);
    const value = JSON.parse(result.stdout) as {
      total_cost_usd: number;
      agents: Array<{
        cost_usd: number;
        usage: { cache_creation: { ephemeral_5m_input_tokens: number } };
      }>;
    };
    expect(value.agents).toHaveLength(2);
    for (const agent of value.agents) {
      expect(agent.usage.cache_creation.ephemeral_5m_input_tokens).toBeGreaterThan(0);
      expect(agent.cost_usd).toBeCloseTo(agent.usage.cache_creation.ephemeral_5m_input_tokens, 6);
    }
    expect(value.total_cost_usd).toBeCloseTo(
      value.agents.reduce((total, agent) => total + agent.cost_usd, 0),
      6,
    );
  });

  it('runs the main agent with the --model alias it was given, in the --cwd folder', async () => {
    const other = join(scratch.root, 'other-project');
    await mkdir(other, { recursive: true });
    await writeFile(join(other, 'only-here.txt'), 'x\n');
    const result = await runToolCall(
      ['--model', 'opus', '--cwd', other, '--output-format', 'stream-json'],
      'Glob {"pattern": "*.txt"}',
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = parseLines(result.stdout);
    expect(lines[0]).toMatchObject({ type: 'system', cwd: other, model: 'claude-opus-5-5' });
    const summary = lines.at(-1) as unknown as { result: string; agents: Array<{ model: string }> };
    expect(summary.result).toMatch(/^OK: .*only-here\.txt/s);
    expect(summary.agents[0]?.model).toBe('claude-opus-5-5');
  });

  it('takes -p after run as claude -p does, in every output format, and from stdin', async () => {
    const text = await run(['run', '-p', 'hello there', '--sim']);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe('hello there\n');
    const json = await run(['run', '-p', 'hello there', '--sim', '--output-format', 'json']);
    expect((JSON.parse(json.stdout) as { result: string }).result).toBe('hello there');
    const stream = await run([
      'run',
      '-p',
      'hello there',
      '--sim',
      '--output-format',
      'stream-json',
    ]);
    expect(parseLines(stream.stdout).map((line) => line.type)).toEqual([
      'system',
      'assistant',
      'result',
    ]);
    const piped = await run(['run', '-p', '--sim', '--output-format', 'json'], {
      input: 'piped prompt\n',
    });
    expect((JSON.parse(piped.stdout) as { result: string }).result).toBe('piped prompt');
  });

  it('reads the prompt from stdin when `delegate run` has no prompt argument', async () => {
    const piped = await run(['run', '--sim'], { input: 'fix it\n' });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('fix it\n');
    const withModule = await run(['run', '--sim', policy('echo-history')], {
      input: 'say hi\n',
    });
    expect(withModule.stdout).toBe('seen: say hi\n');
    const empty = await run(['run', '--sim'], { input: '  \n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      'delegate: The prompt is empty (no prompt argument, and stdin gave no text). Pass it as an argument (delegate run "<prompt>"), or pipe text in (echo "<prompt>" | delegate run).\n',
    );
  });

  it('takes the word after --sim for a policy module only when it ends in a module extension', async () => {
    await writeFile(join(scratch.project, 'README.md'), '# not a policy\n');
    const file = await run(['run', '--sim', 'README.md']);
    expect(file.code, file.stderr).toBe(0);
    expect(file.stdout).toBe('README.md\n');
    const words = await run(['run', '--sim', 'README.md', 'and', 'more']);
    expect(words.stdout).toBe('README.md and more\n');
    for (const name of ['policy.cjs', 'policy.mts', 'policy.cts']) {
      const module = await run(['run', '--sim', name, 'hi']);
      expect(module.code, name).toBe(2);
      expect(module.stderr, name).toContain(
        `Policy module ${join(scratch.project, name)} does not exist`,
      );
    }
  });

  it('reads the prompt from stdin with -p', async () => {
    const result = await run(['-p', '--sim', '--output-format', 'json'], {
      input: 'hello from stdin\n',
    });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { result: string }).result).toContain('hello from stdin');
  });

  it('exits 1 at the turn limit and after an API error, saying why', async () => {
    const turns = await run([
      'run',
      '--sim',
      policy('always-glob'),
      '--max-turns',
      '2',
      '--output-format',
      'json',
      'loop',
    ]);
    expect(turns.code).toBe(1);
    expect(JSON.parse(turns.stdout)).toMatchObject({
      exit_reason: 'max_turns',
      subtype: 'error_max_turns',
      is_error: true,
      error:
        'The main agent reached --max-turns 2 before finishing. Pass a higher --max-turns, or give it a smaller task.',
    });
    const text = await run(['run', '--sim', policy('always-glob'), '--max-turns', '2', 'loop']);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(
      /^The main agent reached --max-turns 2 before finishing\. Pass a higher --max-turns, or give it a smaller task\. · 2 turns · /m,
    );
    expect(text.stderr).not.toMatch(/repl_main_thread|in its definition/);
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    const settings = join(scratch.project, '.delegate', 'settings.json');
    await writeFile(settings, JSON.stringify({ maxTurns: 3 }));
    const fromSettings = await run(['run', '--sim', policy('always-glob'), 'loop']);
    expect(fromSettings.stderr).toContain(
      `The main agent reached its turn limit of 3 (maxTurns in ${settings}) before finishing. Pass a higher --max-turns`,
    );
    const api = await run(['run', '--sim', policy('overloaded'), 'hi']);
    expect(api.code).toBe(1);
    expect(api.stderr).toMatch(/overloaded/i);
  });

  it('exits 1 naming the main agent and the API error when a stream keeps failing mid-run, and --resume goes on', async () => {
    const failed = await run([
      'run',
      '--sim',
      policy('fails-after-tool'),
      '--output-format',
      'json',
      'list the files',
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /The Messages API request of the main agent \(repl_main_thread\) failed: api_error: Internal server error \(request req_\w+\)/,
    );
    expect(failed.stderr).not.toContain('{"type":"error"');
    const { session_id: sessionId } = JSON.parse(failed.stdout) as { session_id: string };
    const resumed = await run([
      'run',
      '--sim',
      policy('fails-after-tool'),
      '--resume',
      sessionId,
      'go on',
    ]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('picked up where it stopped');
  });

  it('forks by default and starts a fresh agent with --no-fork', async () => {
    const agentType = async (flags: string[]) => {
      const result = await run([
        'run',
        '--sim',
        policy('fork-one'),
        '--output-format',
        'stream-json',
        ...flags,
        'go',
      ]);
      expect(result.code).toBe(0);
      const started = parseLines(result.stdout).find(
        (line) =>
          line.type === 'delegate_event' &&
          (line['event'] as { type: string }).type === 'agent.started',
      );
      return (started?.['event'] as { agentType: string; mode: string }).agentType;
    };
    expect(await agentType([])).toBe('fork');
    expect(await agentType(['--no-fork'])).toBe('general-purpose');
  });

  it('refuses a FIFO, a device or an oversized file given to --agents or --mcp-config, instead of hanging', async () => {
    const fifo = join(scratch.root, 'agents.fifo');
    execFileSync('mkfifo', [fifo]);
    const large = join(scratch.root, 'large.json');
    await writeFile(large, `{"a": "${'x'.repeat(4 * 1024 * 1024)}"}`);
    for (const flag of ['--agents', '--mcp-config']) {
      for (const [path, reason] of [
        ['/dev/zero', 'is not a regular file'],
        [fifo, 'is not a regular file'],
        [large, 'is 4194313 bytes, over the 4194304-byte limit'],
      ] as const) {
        const result = await run(['run', '--sim', flag, path, 'hi']);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain(`${flag} ${path}: ${reason}`);
        expect(result.stderr).not.toMatch(/\n\s+at /);
      }
    }
    const listed = await run(['agents', 'list', '--agents', '/dev/zero']);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain('--agents /dev/zero: is not a regular file');
  });

  it('lets --agents JSON override a project agent, and --agent run the main thread as it', async () => {
    await mkdir(join(scratch.project, '.claude', 'agents'), { recursive: true });
    await writeFile(
      join(scratch.project, '.claude', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Project reviewer.\n---\nYou are the project reviewer.',
    );
    const flag = JSON.stringify({
      reviewer: {
        description: 'Flag reviewer.',
        prompt: 'You are the flag reviewer.',
        tools: ['Read'],
      },
    });
    const listed = await run(['agents', 'list', '--agents', flag, '--json']);
    const { agents } = JSON.parse(listed.stdout) as {
      agents: Array<{ name: string; source: string; active: boolean; overrides: string }>;
    };
    expect(
      agents
        .filter((agent) => agent.name === 'reviewer')
        .map((agent) => [agent.source, agent.active]),
    ).toEqual([
      ['projectSettings', false],
      ['flagSettings', true],
    ]);
    expect(agents.find((agent) => agent.active && agent.name === 'reviewer')?.overrides).toContain(
      'projectSettings',
    );
    const result = await run([
      'run',
      '--sim',
      policy('echo-history'),
      '--agents',
      flag,
      '--agent',
      'reviewer',
      '--output-format',
      'stream-json',
      'hi',
    ]);
    expect(result.code).toBe(0);
    const init = parseLines(result.stdout)[0];
    // The main thread has the definition's tools (plus the agent tools every session has).
    expect(init?.['tools']).toContain('Read');
    expect(init?.['tools']).not.toContain('Bash');
    const unknown = await run(['run', '--sim', '--agent', 'nobody', 'hi']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nobody');
  });

  it('writes transcripts and continues a session with --resume', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const first = await run([
      'run',
      '--sim',
      policy('echo-history'),
      '--transcript-dir',
      transcripts,
      '--output-format',
      'json',
      'first question',
    ]);
    const sessionId = (JSON.parse(first.stdout) as { session_id: string }).session_id;
    expect(await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8')).toContain(
      'first question',
    );
    const second = await run([
      'run',
      '--sim',
      policy('echo-history'),
      '--transcript-dir',
      transcripts,
      '--resume',
      sessionId,
      '--output-format',
      'json',
      'second question',
    ]);
    expect(second.code).toBe(0);
    const value = JSON.parse(second.stdout) as { result: string; session_id: string };
    expect(value.session_id).toBe(sessionId);
    expect(value.result).toBe('seen: first question | second question');
    const missing = await run([
      'run',
      '--sim',
      '--transcript-dir',
      transcripts,
      '--resume',
      'no-such-session',
      'x',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no-such-session');
  });

  it('refuses to --resume a session whose transcript is empty, instead of running as a fresh one', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    await mkdir(transcripts, { recursive: true });
    const path = join(transcripts, 'crashed-early.jsonl');
    // Blank lines past the first 4 KiB are still no message.
    for (const content of ['', '\n\n', ' \n'.repeat(3000)]) {
      await writeFile(path, content);
      const result = await run([
        'run',
        '--sim',
        policy('echo-history'),
        '--transcript-dir',
        transcripts,
        '--resume',
        'crashed-early',
        'continue',
      ]);
      expect(result.code).toBe(2);
      // The refusal alone: the session was not opened, so it warned of nothing.
      expect(result.stderr).toBe(
        `delegate: --resume crashed-early: the transcript at ${path} records no message, so there is no conversation to continue. Run without --resume to start a new session; \`delegate transcripts list\` shows the others.\n`,
      );
      expect(result.stdout).toBe('');
      expect(await readFile(path, 'utf8')).toBe(content);
    }
  });

  it('refuses to --resume a session whose transcript is a FIFO, naming --resume and the path', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    await mkdir(transcripts, { recursive: true });
    const path = join(transcripts, 'piped.jsonl');
    execFileSync('mkfifo', [path]);
    const result = await run([
      'run',
      '--sim',
      policy('echo-history'),
      '--transcript-dir',
      transcripts,
      '--resume',
      'piped',
      'continue',
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `delegate: --resume piped: ${path} is not a regular file (a FIFO, a device, a socket or a directory), so it is not a transcript to continue.`,
    );
  });

  it('refuses to --resume a transcript with a corrupt line in the middle as a usage error naming the file and line', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const sessionId = await recordSession(transcripts, 'echo-history', 'hi');
    const path = join(transcripts, `${sessionId}.jsonl`);
    const lines = (await readFile(path, 'utf8')).split('\n');
    await writeFile(path, [lines[0], 'garbage', ...lines.slice(1)].join('\n'));
    const result = await runRecorded(transcripts, 'echo-history', [
      '--resume',
      sessionId,
      'continue',
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `delegate: --resume ${sessionId}: ${path}:2: torn or corrupt transcript line`,
    );
    expect(result.stderr).toContain('remove that one line');
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('refuses to --resume a session another running process holds, and takes over the lock of one that is gone', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const sessionId = await recordSession(transcripts, 'echo-history', 'hi');
    const lock = join(transcripts, `${sessionId}.lock`);
    // A run that ended released its lock.
    expect(existsSync(lock)).toBe(false);
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await writeFile(lock, `${holder.pid}\n`);
      const resume = () =>
        runRecorded(transcripts, 'echo-history', ['--resume', sessionId, 'again']);
      const refused = await resume();
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `--resume ${sessionId}: the session is in use by process ${holder.pid}, which is still running`,
      );
      expect(await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8')).not.toContain(
        'again',
      );
      holder.kill();
      await new Promise((resolve) => holder.on('close', resolve));
      const resumed = await resume();
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('seen: hi | again');
      expect(existsSync(lock)).toBe(false);
    } finally {
      holder.kill();
    }
  });

  it('--resume gives an Agent call the crash left in flight the report its finished agent recorded', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const sessionId = await recordSession(transcripts, 'spawn-general', 'go');
    const path = join(transcripts, `${sessionId}.jsonl`);
    // The process died after the sub-agent reported, before the Agent call's result was written.
    const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');
    const cut = lines.findIndex((line) => line.includes('"tool_result"'));
    expect(cut).toBeGreaterThan(0);
    await writeFile(path, `${lines.slice(0, cut).join('\n')}\n`);
    const callId = /"type":"tool_use","id":"([^"]+)"/.exec(lines.slice(0, cut).join('\n'))?.[1];
    expect(callId).toBeDefined();
    const resumed = await runRecorded(transcripts, 'echo-history', [
      '--resume',
      sessionId,
      'continue',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = (await readFile(path, 'utf8'))
      .split('\n')
      .filter((line) => line.includes(`"tool_use_id":"${callId}"`));
    // One result, recorded in the transcript: the agent's report, not "did not complete".
    expect(after).toHaveLength(1);
    expect(after[0]).toContain('The agent finished before the run stopped');
    expect(after[0]).toContain('hi from the sub-agent');
    expect(after[0]).not.toContain('Interrupted');
  });

  /**
   * A library session whose background agent finished while the main agent was idle, dropped
   * before its next turn: the notification is queued, recorded, and never delivered.
   */
  async function recordUndeliveredNotification(
    transcripts: string,
  ): Promise<{ sessionId: string; taskId: string; agentId: string }> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const sim = await startSim({
      policy: rules([
        {
          match: { when: (request) => request.agent === undefined && request.turnIndex === 0 },
          reply: [
            {
              type: 'tool_use',
              name: 'Agent',
              input: {
                description: 'job',
                prompt: 'Do the job',
                subagent_type: 'general-purpose',
                run_in_background: true,
              },
            },
          ],
        },
        {
          match: { agent: 'general-purpose' },
          reply: async () => {
            await released;
            return 'job done';
          },
        },
        { match: {}, reply: 'started it' },
      ]),
    });
    const agents = getBuiltInAgents();
    let first: DelegateSession | undefined;
    let task: ReturnType<DelegateSession['tasks']['list']>[number] | undefined;
    try {
      first = await DelegateSession.create({
        cwd: scratch.project,
        apiKey: 'k',
        baseURL: sim.url,
        homeDir: scratch.home,
        transcriptDir: transcripts,
        agentDefinitions: { activeAgents: agents, allAgents: agents },
      });
      await first.send('start a job');
      release();
      [task] = first.tasks.list();
      await first.tasks.waitFor(task!.id);
      first.abort();
      await first.flush();
    } finally {
      // Also when something above failed: nothing of the first process outlives the test.
      release();
      first?.abort();
      await sim.close();
    }
    expect(task?.notification?.status).toBe('undeliverable');

    return { sessionId: first!.sessionId, taskId: task!.id, agentId: task!.agentId! };
  }

  it('--resume delivers, once, the notification of a background agent the previous process never delivered', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const first = await recordUndeliveredNotification(transcripts);
    const resume = (prompt: string) =>
      runRecorded(transcripts, 'echo-history', [
        '--resume',
        first.sessionId,
        '--output-format',
        'json',
        prompt,
      ]);
    const times = (text: string) => text.split(`task-id: ${first.taskId}`).length - 1;
    const delivered = await resume('what happened?');
    expect(delivered.code).toBe(0);
    const result = (JSON.parse(delivered.stdout) as { result: string }).result;
    expect(result).toContain('start a job | what happened? | <task-notification>');
    expect(times(result)).toBe(1);
    // Delivered once: the next resume sees it in the history only.
    const later = await resume('anything else?');
    expect(times((JSON.parse(later.stdout) as { result: string }).result)).toBe(1);
  });

  it('--resume holds back the outcome of a background agent whose transcript it cannot read, and tells it once the file is mended', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const first = await recordUndeliveredNotification(transcripts);
    // The process died before it queued the notification: only the agent's transcript knows.
    const main = join(transcripts, `${first.sessionId}.jsonl`);
    const mainLines = (await readFile(main, 'utf8')).split('\n').filter((line) => line !== '');
    await writeFile(
      main,
      `${mainLines.filter((line) => !line.includes('task_notification_queued')).join('\n')}\n`,
    );
    const agentFile = join(transcripts, first.sessionId, 'agents', `${first.agentId}.jsonl`);
    const good = await readFile(agentFile, 'utf8');
    const lines = good.split('\n');
    await writeFile(agentFile, [lines[0], 'garbage', ...lines.slice(1)].join('\n'));
    const resume = (prompt: string) =>
      runRecorded(transcripts, 'echo-history', [
        '--resume',
        first.sessionId,
        '--output-format',
        'json',
        prompt,
      ]);
    const held = await resume('what happened?');
    expect(held.code, held.stderr).toBe(0);
    expect(held.stderr).toContain(`could not read sub-agent ${first.agentId}`);
    expect(held.stderr).toContain('told nothing about it until its files can be read');
    // No "failed" for an agent whose report may be in the unreadable file.
    expect((JSON.parse(held.stdout) as { result: string }).result).not.toContain(
      `task-id: ${first.taskId}`,
    );
    await writeFile(agentFile, good);
    const told = await resume('and now?');
    const result = (JSON.parse(told.stdout) as { result: string }).result;
    expect(result).toContain(`task-id: ${first.taskId}`);
    expect(result).toContain('job done');
    expect(result).not.toContain('status: failed');
  });

  it('confines file tools to the working directory unless --add-dir adds one', async () => {
    const outside = join(scratch.root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'note.txt'), 'the outside note');
    const prompt = `Read ${JSON.stringify({ file_path: join(outside, 'note.txt') })}`;
    const refused = await runToolCall([], prompt);
    expect(refused.stdout).toMatch(/^ERROR: /);
    const allowed = await runToolCall(['--add-dir', outside], prompt);
    expect(allowed.stdout).toMatch(/^OK: .*the outside note/s);
  });

  it('applies --disallowed-tools and --allowed-tools rules to Bash', async () => {
    const prompt = `Bash ${JSON.stringify({ command: 'mkdir made-here' })}`;
    // Without a rule, default mode would ask, and nobody can answer: denied.
    const asked = await runToolCall([], prompt);
    expect(asked.stdout).toMatch(/^ERROR: /);
    expect(existsSync(join(scratch.project, 'made-here'))).toBe(false);
    const allowed = await runToolCall(['--allowed-tools', 'Read Bash(mkdir:*)'], prompt);
    expect(allowed.stdout).toMatch(/^OK: /);
    expect(existsSync(join(scratch.project, 'made-here'))).toBe(true);
    const again = `Bash ${JSON.stringify({ command: 'mkdir made-again' })}`;
    const denied = await runToolCall(
      ['--permission-mode', 'bypassPermissions', '--disallowed-tools', 'Bash(mkdir:*)'],
      again,
    );
    expect(denied.stdout).toMatch(/^ERROR: .*Bash\(mkdir:\*\)/s);
    expect(existsSync(join(scratch.project, 'made-again'))).toBe(false);
  });

  it('writes background shell output to a private per-user directory and deletes it on exit', async () => {
    const temp = join(scratch.root, 'tmp');
    await mkdir(temp);
    const input = { command: 'echo bg-output', run_in_background: true };
    const result = await run(
      ['run', '--sim', policy('tool-from-prompt'), '--permission-mode', 'bypassPermissions'].concat(
        `Bash ${JSON.stringify(input)}`,
      ),
      { env: { TMPDIR: temp } },
    );
    expect(result.stdout).toMatch(/^OK: Started in the background/);
    const directory = join(temp, `delegate-${process.getuid!()}`, 'tasks');
    const logPath = /Output goes to (\S+\.log);/.exec(result.stdout)?.[1];
    expect(logPath?.startsWith(`${directory}/`)).toBe(true);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(existsSync(logPath!)).toBe(false);
    expect(readdirSync(directory)).toEqual([]);
  });

  it("keeps an untrusted project's agent files from loosening permissions or running hooks", async () => {
    const agents = join(scratch.project, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    await writeFile(
      join(agents, 'risky.md'),
      [
        '---',
        'name: risky',
        'description: Runs what it is told',
        'permissionMode: bypassPermissions',
        'hooks:',
        '  PreToolUse:',
        '    - hooks:',
        '        - type: command',
        '          command: touch hook-ran',
        '---',
        'You run what you are told.',
      ].join('\n'),
    );
    const asMain = (name: string) => `Bash ${JSON.stringify({ command: `mkdir ${name}` })}`;
    const asChild = (name: string) =>
      `Agent ${JSON.stringify({ subagent_type: 'risky', description: 'run it', prompt: asMain(name) })}`;
    // The project is not trusted: its agent runs in the default mode, without its hooks, as
    // the main thread (--agent) and as a sub-agent alike; nobody can answer, so Bash is denied.
    const main = await runToolCall(['--agent', 'risky'], asMain('main-made'));
    expect(main.stdout).toMatch(/^ERROR: /);
    expect(main.stderr).toContain('ignored permissionMode in');
    expect(main.stderr).toContain('ignored hooks in');
    expect(main.stderr).toContain('--trust-project');
    const shown = await run(['agents', 'show', 'risky']);
    expect(shown.stdout).toContain('ignored:     permissionMode');
    expect(shown.stdout).toContain('ignored:     hooks');
    const child = await runToolCall([], asChild('child-made'));
    expect(child.stdout).toMatch(/ERROR: /);
    for (const name of ['main-made', 'child-made', 'hook-ran'])
      expect(existsSync(join(scratch.project, name)), name).toBe(false);
    // Trusted, the file applies as written.
    const trusted = await runToolCall(['--trust-project'], asChild('trusted-made'));
    expect(trusted.stdout, trusted.stderr).toMatch(/^OK: /);
    expect(trusted.stderr).not.toContain('ignored');
    expect(existsSync(join(scratch.project, 'trusted-made'))).toBe(true);
    expect(existsSync(join(scratch.project, 'hook-ran'))).toBe(true);
    // As the main thread too: its mode and its hook apply.
    await rm(join(scratch.project, 'hook-ran'));
    const trustedMain = await runToolCall(
      ['--trust-project', '--agent', 'risky'],
      asMain('trusted-main-made'),
    );
    expect(trustedMain.stdout, trustedMain.stderr).toMatch(/^OK: /);
    expect(existsSync(join(scratch.project, 'trusted-main-made'))).toBe(true);
    expect(existsSync(join(scratch.project, 'hook-ran'))).toBe(true);
  });

  it('refuses an --agent whose hook cannot run, naming the flag and the file', async () => {
    const agents = join(scratch.project, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    const file = join(agents, 'badhook.md');
    await writeFile(
      file,
      [
        '---',
        'name: badhook',
        'description: Has a hook of a kind Delegate does not run',
        'hooks:',
        '  PreToolUse:',
        '    - matcher: Bash',
        '      hooks:',
        '        - type: prompt',
        '          prompt: Is this call safe?',
        '---',
        'You work.',
      ].join('\n'),
    );
    const result = await run(['run', '--sim', 'hi', '--trust-project', '--agent', 'badhook']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `--agent badhook (${file}): hooks.PreToolUse[0].hooks[0].type:`,
    );
    expect(result.stderr).not.toContain('options.mainAgentHooks');
  });

  it('refuses a malformed rule instead of silently denying nothing, naming the flag or the file', async () => {
    // A missing parenthesis used to make the rule name a tool called "Bash(mkdir:*": it matched
    // nothing, and the command it was meant to stop ran.
    const prompt = `Bash ${JSON.stringify({ command: 'mkdir made-anyway' })}`;
    const flagged = await runToolCall(
      ['--permission-mode', 'bypassPermissions', '--disallowed-tools', 'Bash(mkdir:*'],
      prompt,
    );
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain('--disallowed-tools: "Bash(mkdir:*" is not a permission rule');
    expect(existsSync(join(scratch.project, 'made-anyway'))).toBe(false);
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    const settings = join(scratch.project, '.delegate', 'settings.json');
    await writeFile(settings, JSON.stringify({ permissions: { deny: ['Read', 'Bash)'] } }));
    const fromFile = await run(['run', '--sim', 'hi']);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain(`${settings}: "Bash)" is not a permission rule`);
  });

  it('connects stdio MCP servers from --mcp-config and offers their tools', async () => {
    const server = fileURLToPath(
      new URL('../../../packages/tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
    );
    const config = join(scratch.root, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { calc: { command: process.execPath, args: [server] } } }),
    );
    const prompt = `mcp__calc__add ${JSON.stringify({ a: 2, b: 40 })}`;
    const result = await runToolCall(
      [
        '--mcp-config',
        config,
        '--allowed-tools',
        'mcp__calc__add',
        '--output-format',
        'stream-json',
      ],
      prompt,
    );
    expect(result.code).toBe(0);
    const lines = parseLines(result.stdout);
    expect(lines.at(-1)?.['result']).toBe('OK: 42');
    const bad = join(scratch.root, 'bad-mcp.json');
    await writeFile(
      bad,
      JSON.stringify({ mcpServers: { web: { type: 'http', url: 'http://example.invalid' } } }),
    );
    const refused = await run(['run', '--sim', '--mcp-config', bad, 'hi']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(bad);
    expect(refused.stderr).toContain('transport "http" is not supported');
  });

  it('gives a sub-agent the MCP server its own file defines, for its run only', async () => {
    const server = fileURLToPath(
      new URL('../../../packages/tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
    );
    const agents = join(scratch.home, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    await writeFile(
      join(agents, 'echoer.md'),
      [
        '---',
        'name: echoer',
        'description: Echoes through its own MCP server',
        'tools: Read',
        'mcpServers:',
        '  - echo:',
        `      command: ${JSON.stringify(process.execPath)}`,
        `      args: [${JSON.stringify(server)}]`,
        '---',
        'You echo.',
      ].join('\n'),
    );
    const result = await run([
      'run',
      '--sim',
      policy('own-mcp'),
      '--allowed-tools',
      'mcp__echo__echo',
      '--output-format',
      'json',
      'echo through the sub-agent',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { result: string }).result).toBe(
      'The sub-agent said: echoed: from its own server',
    );
    expect(result.stderr).not.toMatch(/MCP_SERVER|could not start/);
    // The server stopped with the agent's run: nothing of it is left once the CLI exits.
    const left = readdirSync('/proc').filter((entry) => {
      try {
        if (!/^\d+$/.test(entry)) return false;
        const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
        return state !== 'Z' && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(server);
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  });

  it('starts the MCP servers an --agent file defines and refuses to run without the ones it requires', async () => {
    const server = fileURLToPath(
      new URL('../../../packages/tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
    );
    const agents = join(scratch.project, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    const file = join(agents, 'calculator.md');
    await writeFile(
      file,
      [
        '---',
        'name: calculator',
        'description: Adds numbers with its own MCP server',
        'mcpServers:',
        '  - github',
        '  - calc:',
        `      command: ${JSON.stringify(process.execPath)}`,
        `      args: [${JSON.stringify(server)}]`,
        'requiredMcpServers: [calc]',
        'skills: [arithmetic]',
        'hooks:',
        '  Stop:',
        '    - hooks: [{ type: command, command: "true" }]',
        '---',
        'You add numbers.',
      ].join('\n'),
    );
    const where = `--agent calculator (${file})`;
    const prompt = `mcp__calc__add ${JSON.stringify({ a: 2, b: 40 })}`;
    const trusted = await runToolCall(
      ['--trust-project', '--agent', 'calculator', '--allowed-tools', 'mcp__calc__add'],
      prompt,
    );
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toMatch(/^OK: 42/);
    // What the file asks for that this run does not have is said, naming the flag and the file.
    expect(trusted.stderr).toContain(
      `${where}: mcpServers names "github", which this run does not start`,
    );
    expect(trusted.stderr).toContain(`${where}: preloads skills (arithmetic)`);
    expect(trusted.stderr).toContain(`${where}: has hooks for Stop;`);
    expect(trusted.stderr).not.toContain('mainAgentHooks');
    // An untrusted project's file does not start its server, so the agent it requires is missing.
    const untrusted = await runToolCall(['--agent', 'calculator'], prompt);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toContain('ignored mcpServers in');
    expect(untrusted.stderr).toContain(
      `${where}: requires MCP servers matching calc; MCP servers with tools: none.`,
    );
    expect(untrusted.stdout).toBe('');
    // A server the file defines that Delegate cannot start is refused before the run.
    await writeFile(
      file,
      [
        '---',
        'name: calculator',
        'description: Adds numbers with a server of another transport',
        'mcpServers:',
        '  - web: { type: http, url: "http://example.invalid" }',
        '---',
        'You add numbers.',
      ].join('\n'),
    );
    const refused = await run(['run', '--sim', '--trust-project', '--agent', 'calculator', 'hi']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `${where}: mcpServers[0].web: transport "http" is not supported`,
    );
  });

  it('leaves denied agent types out of the init line', async () => {
    const result = await run([
      'run',
      '--sim',
      '--disallowed-tools',
      'Agent(Explore)',
      '--output-format',
      'stream-json',
      'hi',
    ]);
    const init = parseLines(result.stdout)[0];
    expect(init?.['agents']).toContain('Plan');
    expect(init?.['agents']).not.toContain('Explore');
  });

  it('stops quietly with code 141 when the reader of the output goes away', async () => {
    const child = spawn(
      process.execPath,
      [CLI_BIN, 'run', '--sim', policy('always-glob'), '--output-format', 'stream-json', 'loop'],
      {
        cwd: scratch.project,
        env: { ...process.env, HOME: scratch.home, ANTHROPIC_API_KEY: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // Like `| head -1`: read the first line, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(141);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.js:\d+/);
  });

  it('stops every agent on SIGINT (exit 130), SIGTERM (exit 143) and SIGHUP (exit 129) outside a terminal', async () => {
    for (const [signal, expected, reason] of [
      ['SIGINT', 130, 'interrupted'],
      ['SIGTERM', 143, 'terminated'],
      ['SIGHUP', 129, 'hangup'],
    ] as const) {
      const child = spawn(
        process.execPath,
        [CLI_BIN, 'run', '--sim', policy('always-glob'), '--output-format', 'stream-json', 'loop'],
        {
          cwd: scratch.project,
          env: { ...process.env, HOME: scratch.home },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      // The loop runs until it is stopped; its first response shows it is under way.
      await new Promise<void>((resolve) => {
        const check = (): void => {
          if (stdout.includes('"type":"assistant"')) resolve();
          else setTimeout(check, 20);
        };
        check();
      });
      child.kill(signal);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, `${signal}: ${stderr}`).toBe(expected);
      expect(parseLines(stdout).at(-1)).toMatchObject({
        type: 'result',
        exit_reason: reason,
        is_error: true,
      });
    }
  });

  it('stops the shell commands it started when the terminal closes (SIGHUP)', async () => {
    const prompt = `Bash ${JSON.stringify({ command: 'echo $$ > shell.pid; sleep 30' })}`;
    const child = spawn(
      process.execPath,
      [
        CLI_BIN,
        'run',
        '--sim',
        policy('tool-from-prompt'),
        '--permission-mode',
        'bypassPermissions',
        prompt,
      ],
      {
        cwd: scratch.project,
        env: { ...process.env, HOME: scratch.home },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A process counts as gone once it has exited, reaped or not (a zombie runs nothing).
    const alive = (pid: number): boolean => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    try {
      const pidFile = join(scratch.project, 'shell.pid');
      let pid: number | undefined;
      for (let tries = 0; tries < 500 && pid === undefined; tries++) {
        const text = await readFile(pidFile, 'utf8').catch(() => '');
        if (text.trim() !== '') pid = Number(text.trim());
        else await delay(20);
      }
      expect(pid, `the Bash command never started: ${stderr}`).toBeDefined();
      child.kill('SIGHUP');
      expect(await closed, stderr).toBe(129);
      expect(stderr).toContain('the terminal closed (SIGHUP)');
      // The shell (and its sleep, in its process group) is gone, not left running under init.
      for (let tries = 0; tries < 100 && alive(pid!); tries++) await delay(50);
      expect(alive(pid!)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
