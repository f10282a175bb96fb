import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { startSim } from '@delegate/api-sim';
import { DelegateSession } from '@delegate/runtime';
import { CLI_BIN, type Scratch, makeScratch, policy, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

function childEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ANTHROPIC_')) env[key] = value;
  }
  return { ...env, HOME: home, NO_COLOR: '1' };
}

/**
 * Runs the `background` policy's one background agent (`bg 3`: a Bash `sleep`) with
 * transcripts and SIGKILLs the CLI while that Bash call runs; returns the options to resume
 * with, the session id and what the killed process printed.
 */
async function crashDuringBackgroundBash(): Promise<{
  transcripts: string;
  common: string[];
  sessionId: string;
  stderr: string;
}> {
  const transcripts = join(scratch.root, 'transcripts');
  const common = ['--sim', policy('background'), '--transcript-dir', transcripts];
  const stderr = await killWhen(
    ['run', ...common, '--permission-mode', 'bypassPermissions', 'bg 3'],
    / (a[0-9a-f]+) tool Bash/,
  );
  const sessionId = /session ([0-9a-f-]{36})/.exec(stderr)![1]!;
  return { transcripts, common, sessionId, stderr };
}

/**
 * Starts `delegate` with `args` and sends it `signal` (SIGKILL unless told) once its stderr
 * shows `until`; resolves with its stderr when it has exited.
 */
function killWhen(
  args: readonly string[],
  until: RegExp,
  signal: 'SIGKILL' | 'SIGINT' | 'SIGTERM' | 'SIGHUP' = 'SIGKILL',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: scratch.project,
      env: childEnv(scratch.home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`never saw ${String(until)}; stderr:\n${stderr}`));
    }, 20_000);
    let sent = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!sent && until.test(stderr)) sent = child.kill(signal);
    });
    // Not 'exit': what it wrote to stderr while stopping is read to the end.
    child.on('close', (code, killedBy) => {
      clearTimeout(timer);
      if (sent && (killedBy === 'SIGKILL' || signal !== 'SIGKILL')) resolve(stderr);
      else reject(new Error(`exited on its own (${String(code ?? killedBy)}); stderr:\n${stderr}`));
    });
  });
}

function git(args: string[]): string {
  return execFileSync('git', args, {
    cwd: scratch.project,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  });
}

describe('delegate run --resume after the earlier process was SIGKILLed', () => {
  it('tells the main agent, once, that its background agent was lost with the process, and names the worktree it left', async () => {
    git(['init', '-q']);
    await writeFile(join(scratch.project, 'a.txt'), 'a\n');
    git(['add', '.']);
    git(['commit', '-qm', 'init']);
    const transcripts = join(scratch.root, 'transcripts');
    // general-purpose, redefined to run in its own worktree.
    const agents = JSON.stringify({
      'general-purpose': {
        description: 'Does the job',
        prompt: 'Do the job.',
        isolation: 'worktree',
        tools: ['Bash'],
      },
    });
    const common = [
      '--sim',
      policy('background'),
      '--agents',
      agents,
      '--transcript-dir',
      transcripts,
      '--permission-mode',
      'bypassPermissions',
    ];
    // The background agent's `sleep 3` is running when the process dies.
    const stderr = await killWhen(['run', ...common, 'bg 3'], / (a[0-9a-f]+) tool Bash/);
    const agentId = / (a[0-9a-f]+) started general-purpose/.exec(stderr)?.[1];
    const sessionId = /session ([0-9a-f-]{36})/.exec(stderr)?.[1];
    expect(agentId).toBeDefined();
    const worktree = JSON.parse(
      await readFile(join(transcripts, sessionId!, 'agents', `${agentId}.meta.json`), 'utf8'),
    ) as { cwd: string };
    try {
      expect(existsSync(worktree.cwd)).toBe(true);
      const resume = (prompt: string) =>
        runCli(['run', ...common, '--resume', sessionId!, '--output-format', 'json', prompt], {
          cwd: scratch.project,
          home: scratch.home,
        });
      const first = await resume('what happened?');
      expect(first.code).toBe(0);
      expect(first.stderr).toContain(
        `sub-agent ${agentId} (general-purpose "bg job") had not finished when the earlier run stopped`,
      );
      expect(first.stderr).toContain(`Its worktree is kept at ${worktree.cwd}`);
      // The first request carries a notification that the agent failed (the policy answers it).
      expect((JSON.parse(first.stdout) as { result: string }).result).toBe('notified: failed');
      const main = await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8');
      const times = (text: string) => text.split(`agent-id: ${agentId}`).length - 1;
      // One queued record and one delivery.
      expect(times(main)).toBe(2);
      const second = await resume('and now?');
      expect(second.code).toBe(0);
      // No notification this time: the policy echoes the prompt.
      expect((JSON.parse(second.stdout) as { result: string }).result).toMatch(
        /^echo: [\s\S]*and now\?$/,
      );
      expect(times(await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8'))).toBe(2);
    } finally {
      git(['worktree', 'remove', '--force', worktree.cwd]);
      await rm(worktree.cwd, { recursive: true, force: true });
    }
  }, 60_000);

  it('tells the main agent that a background agent stopped by Ctrl-C was stopped, with when, not that it failed', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const common = ['--sim', policy('background'), '--transcript-dir', transcripts];
    const stderr = await killWhen(
      ['run', ...common, '--permission-mode', 'bypassPermissions', 'bg 5'],
      / (a[0-9a-f]+) tool Bash/,
      'SIGINT',
    );
    expect(stderr).toContain('stopped by Ctrl-C');
    const agentId = / (a[0-9a-f]+) started general-purpose/.exec(stderr)![1]!;
    const sessionId = /session ([0-9a-f-]{36})/.exec(stderr)![1]!;
    const resumed = await runCli(
      ['run', ...common, '--resume', sessionId, '--output-format', 'json', 'what happened?'],
      { cwd: scratch.project, home: scratch.home },
    );
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(
      `sub-agent ${agentId} (general-purpose "bg job") was stopped before it finished`,
    );
    expect((JSON.parse(resumed.stdout) as { result: string }).result).toBe('notified: killed');
    const main = await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8');
    expect(main).toContain('summary: Background agent \\"bg job\\" was stopped.');
    expect(main).toMatch(/error: Stopped by Ctrl-C at \d\d:\d\d:\d\d UTC, before it finished\./);
    expect(main).not.toContain('status: failed');
  }, 60_000);

  it.each([
    ['SIGTERM', /error: Stopped by SIGTERM at \d\d:\d\d:\d\d UTC, before it finished\./],
    [
      'SIGHUP',
      /error: Stopped: the terminal closed \(SIGHUP\) at \d\d:\d\d:\d\d UTC, before it finished\./,
    ],
  ] as const)(
    'says how a %s stop ended a background agent, too',
    async (signal, said) => {
      const transcripts = join(scratch.root, 'transcripts');
      const common = ['--sim', policy('background'), '--transcript-dir', transcripts];
      const stderr = await killWhen(
        ['run', ...common, '--permission-mode', 'bypassPermissions', 'bg 5'],
        / (a[0-9a-f]+) tool Bash/,
        signal,
      );
      const sessionId = /session ([0-9a-f-]{36})/.exec(stderr)![1]!;
      const resumed = await runCli(
        ['run', ...common, '--resume', sessionId, '--output-format', 'json', 'what happened?'],
        { cwd: scratch.project, home: scratch.home },
      );
      expect((JSON.parse(resumed.stdout) as { result: string }).result).toBe('notified: killed');
      const main = await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8');
      expect(main).toMatch(said);
    },
    60_000,
  );

  it('says that a background agent stopped because its run ended first (out of turns)', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const common = ['--sim', policy('background'), '--transcript-dir', transcripts];
    // One turn: the main agent starts the agent, then has no turn left to wait for it.
    const first = await runCli(
      [
        'run',
        ...common,
        '--permission-mode',
        'bypassPermissions',
        '--max-turns',
        '1',
        '--output-format',
        'json',
        'bg 30',
      ],
      { cwd: scratch.project, home: scratch.home },
    );
    const { session_id: sessionId } = JSON.parse(first.stdout) as { session_id: string };
    const resumed = await runCli(
      ['run', ...common, '--resume', sessionId, '--output-format', 'json', 'what happened?'],
      { cwd: scratch.project, home: scratch.home },
    );
    expect((JSON.parse(resumed.stdout) as { result: string }).result).toBe('notified: killed');
    const main = await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8');
    expect(main).toMatch(
      /error: Stopped because the run ended \(max turns\) at \d\d:\d\d:\d\d UTC, before it finished\./,
    );
  }, 60_000);

  it('tells the main agent that a foreground agent cut by the crash will not report, instead of to wait for it', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const common = ['--sim', policy('background'), '--transcript-dir', transcripts];
    const stderr = await killWhen(
      ['run', ...common, '--permission-mode', 'bypassPermissions', 'fg 5'],
      / (a[0-9a-f]+) tool Bash/,
    );
    const sessionId = /session ([0-9a-f-]{36})/.exec(stderr)![1]!;
    const resumed = await runCli(
      ['run', ...common, '--resume', sessionId, '--output-format', 'json', 'what happened?'],
      { cwd: scratch.project, home: scratch.home },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const main = await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8');
    expect(main).toContain('--resume does not restart it, so no report will come');
    expect(main).not.toContain('may be resumed on its own');
  }, 60_000);

  it('owes the notification also when the crash came before the agent files were written', async () => {
    const { transcripts, common, sessionId } = await crashDuringBackgroundBash();
    // As if the process had died before writing the agent's transcript and metadata.
    await rm(join(transcripts, sessionId, 'agents'), { recursive: true });
    const resumed = await runCli(
      ['run', ...common, '--resume', sessionId, '--output-format', 'json', 'what happened?'],
      { cwd: scratch.project, home: scratch.home },
    );
    expect(resumed.code).toBe(0);
    expect((JSON.parse(resumed.stdout) as { result: string }).result).toBe('notified: failed');
    const main = await readFile(join(transcripts, `${sessionId}.jsonl`), 'utf8');
    expect(main).toContain('summary: Background agent \\"bg job\\" failed.');
  });

  it('does not owe a notification for an agent a host resumed since and that reported', async () => {
    const { transcripts, common, sessionId, stderr } = await crashDuringBackgroundBash();
    const agentId = / (a[0-9a-f]+) started general-purpose/.exec(stderr)![1]!;
    // A library host picks the session up and resumes the agent (under a new task), as the
    // server does; the agent reports and the main agent hears it.
    const sim = await startSim({
      policy: (request) => {
        if (request.agent !== undefined) return 'slept after all';
        return /<task-notification>/.test(request.lastUserText) ? 'heard it' : 'ok';
      },
    });
    const agents = getBuiltInAgents();
    try {
      const host = await DelegateSession.create({
        cwd: scratch.project,
        apiKey: 'k',
        baseURL: sim.url,
        homeDir: scratch.home,
        transcriptDir: transcripts,
        sessionId,
        resume: true,
        agentDefinitions: { activeAgents: agents, allAgents: agents },
      });
      const resumed = await host.resumeAgent({ agentId });
      expect(resumed.status).toBe('async_launched');
      const taskId = (resumed as { taskId: string }).taskId;
      await host.tasks.waitFor(taskId);
      expect((await host.send('')).text).toBe('heard it');
      await host.flush();
    } finally {
      await sim.close();
    }
    const file = join(transcripts, `${sessionId}.jsonl`);
    const times = (text: string) => text.split(`agent-id: ${agentId}`).length - 1;
    const before = times(await readFile(file, 'utf8'));
    const later = await runCli(
      ['run', ...common, '--resume', sessionId, '--output-format', 'json', 'anything?'],
      { cwd: scratch.project, home: scratch.home },
    );
    expect(later.code).toBe(0);
    expect((JSON.parse(later.stdout) as { result: string }).result).toMatch(/^echo: /);
    expect(times(await readFile(file, 'utf8'))).toBe(before);
  });

  it('refuses a transcript folder that is a file before anything runs', async () => {
    const notAFolder = join(scratch.root, 'transcripts');
    await writeFile(notAFolder, 'not a folder\n');
    const result = await runCli(
      ['run', '--sim', policy('echo-history'), '--transcript-dir', notAFolder, 'hello'],
      { cwd: scratch.project, home: scratch.home },
    );
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `The transcript folder ${notAFolder} (from --transcript-dir) is not a folder`,
    );
    const listed = await runCli(['transcripts', 'list', '--transcript-dir', notAFolder], {
      cwd: scratch.project,
      home: scratch.home,
    });
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain('is not a folder');
  });

  it('refuses to --resume a transcript with no complete message in it, as an empty one', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    await mkdir(transcripts);
    const sessionId = 'b5d9a0e2-0000-4000-8000-000000000001';
    // A crash cut the only line while it was written.
    await writeFile(join(transcripts, `${sessionId}.jsonl`), '{"type":"user","uuid":"');
    const result = await runCli(
      [
        'run',
        '--sim',
        policy('echo-history'),
        '--transcript-dir',
        transcripts,
        '--resume',
        sessionId,
        'hello',
      ],
      { cwd: scratch.project, home: scratch.home },
    );
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    // The refusal alone: no torn-line or empty-transcript warning from a session that was
    // opened anyway (it was not: the check runs before anything is connected).
    expect(result.stderr).toBe(
      `delegate: --resume ${sessionId}: the transcript at ${join(transcripts, `${sessionId}.jsonl`)} holds no complete message (its only line is cut short, as a crash leaves it), so there is no conversation to continue. Run without --resume to start a new session; \`delegate transcripts list\` shows the others.\n`,
    );
  });

  it('--resume reports a torn last line as a delegate warning and keeps the lines before it', async () => {
    const transcripts = join(scratch.root, 'transcripts');
    const common = ['--sim', policy('echo-history'), '--transcript-dir', transcripts];
    const first = await runCli(['run', ...common, '--output-format', 'json', 'one'], {
      cwd: scratch.project,
      home: scratch.home,
    });
    const sessionId = (JSON.parse(first.stdout) as { session_id: string }).session_id;
    const file = join(transcripts, `${sessionId}.jsonl`);
    // A crash cut the last line (the answer) while it was written.
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.length - 40));
    const resumed = await runCli(['run', ...common, '--resume', sessionId, 'two'], {
      cwd: scratch.project,
      home: scratch.home,
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe('seen: one | two\n');
    expect(resumed.stderr).toMatch(
      /^delegate: warning: .*jsonl:\d+: skipped a torn last line .*The messages before it are intact\.$/m,
    );
    expect(resumed.stderr).not.toContain('--trace-warnings');
  });
});

describe('a Delegate process started after one that was SIGKILLed', () => {
  it('stops the shell command a foreground agent of the killed process left running', async () => {
    // A temp folder of the test's own: the shell records of these processes only.
    const temp = join(scratch.root, 'tmp');
    await mkdir(temp);
    const env = { ...childEnv(scratch.home), TMPDIR: temp };
    const sleeper = (): number[] => {
      try {
        return execFileSync('pgrep', ['-f', '^sleep 41\\.377$'], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .map(Number);
      } catch {
        return [];
      }
    };
    const records = join(temp, `delegate-${process.getuid!()}`, 'shells');
    const child = spawn(
      process.execPath,
      [
        CLI_BIN,
        'run',
        '--sim',
        policy('background'),
        '--permission-mode',
        'bypassPermissions',
        'fg 41.377',
      ],
      { cwd: scratch.project, env, stdio: 'ignore' },
    );
    const closed = new Promise((resolve) => child.on('close', resolve));
    try {
      // Killed once its command runs and is recorded: no exit hook can stop it then.
      for (let wait = 0; wait < 400; wait++) {
        const recorded = existsSync(records) && execFileSync('ls', [records]).length > 0;
        if (sleeper().length === 1 && recorded) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const [pid] = sleeper();
      expect(pid).toBeGreaterThan(0);
      child.kill('SIGKILL');
      await closed;
      expect(sleeper()).toEqual([pid]);
      const next = await runCli(['run', '--sim', policy('background'), 'hello'], {
        cwd: scratch.project,
        home: scratch.home,
        env: { TMPDIR: temp },
      });
      expect(next.code).toBe(0);
      expect(sleeper()).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      for (const left of sleeper()) process.kill(left, 'SIGKILL');
    }
  });
});
