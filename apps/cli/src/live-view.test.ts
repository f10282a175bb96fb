import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch, policy } from './__fixtures__/run-cli.js';

// The live view is checked in a real terminal: tmux runs the CLI in a pane, sends keys and
// reads the screen back. `.ci/run` installs tmux when it is missing.
function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let scratch: Scratch;
let session: string;
beforeEach(async () => {
  scratch = await makeScratch();
  session = `delegate-test-${process.pid}-${Date.now()}`;
});
afterEach(async () => {
  try {
    tmux('kill-session', '-t', session);
  } catch {
    // Already gone.
  }
  await scratch.cleanup();
});

/**
 * Runs the CLI with `args` (shell words) in the test's tmux pane, `columns` (160) by `rows`, in
 * the scratch project; `reportsNoSize`: the terminal tells the CLI it is 0 by 0, as some docker
 * -t and CI terminals do, while the pane keeps its size. `screen()` reads the pane,
 * `scrollback()` the pane and all that scrolled off it, `exitCode()` waits for the CLI's exit code.
 */
function startInPane(
  args: string,
  pane: { rows: number; columns?: number; reportsNoSize?: boolean },
): { screen: () => string; scrollback: () => string; exitCode: () => Promise<string> } {
  const exitFile = join(scratch.root, 'exit-code');
  const command = [
    `cd ${JSON.stringify(scratch.project)}`,
    ...(pane.reportsNoSize ? ['stty rows 0 cols 0'] : []),
    `HOME=${JSON.stringify(scratch.home)} ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} ${args}`,
    `echo $? > ${JSON.stringify(exitFile)}`,
    'sleep 60',
  ].join('; ');
  const size = ['-x', String(pane.columns ?? 160), '-y', String(pane.rows)];
  tmux('new-session', '-d', '-s', session, ...size, command);
  return {
    screen: () => tmux('capture-pane', '-t', session, '-p'),
    scrollback: () => tmux('capture-pane', '-t', session, '-p', '-S', '-'),
    exitCode: () =>
      waitFor('the session to end', () =>
        existsSync(exitFile) ? readFileSync(exitFile, 'utf8').trim() : undefined,
      ),
  };
}

describe('the live view in a terminal', () => {
  it('shows the agent tree, moves the running agent to the background on Ctrl-B, and stops everything on Ctrl-C', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const seconds = `29.${String(process.pid).padStart(5, '0')}`;
    const { screen, exitCode } = startInPane(
      `run --sim ${JSON.stringify(policy('live'))} --allowed-tools 'Bash(sleep:*)' 'go sleep-for ${seconds}'`,
      { rows: 40 },
    );

    await waitFor('the tree with both sub-agents', () => {
      const text = screen();
      return text.includes('general-purpose "long task"') &&
        text.includes('fork "quick part"') &&
        text.includes('main')
        ? text
        : undefined;
    });
    await waitFor(
      'the sleeping Bash command',
      () => processesWith(`sleep ${seconds}`).length > 0 || undefined,
    );
    expect(screen()).toMatch(/general-purpose "long task" \[foreground\]/);
    expect(screen()).toContain('Ctrl-B: background the running agent');

    tmux('send-keys', '-t', session, 'C-b');
    const backgrounded = await waitFor('the agent in the background', () => {
      const text = screen();
      return /general-purpose "long task" \[background\]/.test(text) ? text : undefined;
    });
    expect(backgrounded).toContain('Moved general-purpose to the background.');
    // With no foreground agent left, the last line no longer offers Ctrl-B.
    await waitFor('the key hint without Ctrl-B', () => {
      const text = screen();
      return text.includes('· Ctrl-C: stop') && !text.includes('Ctrl-B: background')
        ? text
        : undefined;
    });
    // The main agent got its turn back while the agent keeps running.
    expect(processesWith(`sleep ${seconds}`).length).toBeGreaterThan(0);

    tmux('send-keys', '-t', session, 'C-c');
    const code = await exitCode();
    expect(code).toBe('130');
    expect(screen()).toContain('stopped by Ctrl-C');
    await waitFor(
      'no sleeping child left',
      () => processesWith(`sleep ${seconds}`).length === 0 || undefined,
      5_000,
    );
    // The CLI process itself is gone (the pane's shell, whose command line names it, lives on).
    expect(processesWith(`${process.execPath} ${CLI_BIN} run`)).toEqual([]);
  });
});

describe('the interactive session in a terminal', () => {
  it('answers a prompt, runs slash commands, and exits on /exit', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const { screen, exitCode } = startInPane(`--sim ${JSON.stringify(policy('spawn-general'))}`, {
      rows: 40,
    });
    await waitFor('the prompt', () =>
      screen().includes('/help lists commands') ? true : undefined,
    );
    tmux('send-keys', '-t', session, 'please say hi', 'Enter');
    await waitFor('the answer', () =>
      screen().includes('The sub-agent said: hi from the sub-agent') ? true : undefined,
    );
    tmux('send-keys', '-t', session, '/tasks', 'Enter');
    await waitFor('the task list', () =>
      /t[0-9a-f]+\s+a[0-9a-f]+\s+local_agent\s+completed\s+say hi/.test(screen())
        ? true
        : undefined,
    );
    tmux('send-keys', '-t', session, '/cost', 'Enter');
    await waitFor('the cost table', () =>
      /general-purpose "say hi"\s+foreground\s+completed/.test(screen()) ? true : undefined,
    );
    // A line of only spaces is not sent (the API refuses it): no turn, no error.
    tmux('send-keys', '-t', session, '   ', 'Enter');
    tmux('send-keys', '-t', session, '/nope', 'Enter');
    await waitFor('the unknown-command note', () =>
      screen().includes('Unknown command /nope') ? true : undefined,
    );
    // Long enough for a turn that had started to print how it ended.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(screen()).not.toMatch(/error|whitespace/i);
    tmux('send-keys', '-t', session, '/exit', 'Enter');
    const code = await exitCode();
    expect(code).toBe('0');
  });
});

/** The numbered lines of the `long-answer` policy's answer that `text` holds, in order. */
function answerLines(text: string, count: number): number[] {
  const pattern = new RegExp(`^line (\\d+) of ${count}$`, 'gm');
  return [...text.matchAll(pattern)].map((match) => Number(match[1]));
}

describe('the interactive session in a small terminal, or one that reports no size', () => {
  const every = (count: number): number[] => Array.from({ length: count }, (_, index) => index);

  it('writes every line of an answer taller than the terminal to the scrollback', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const { screen, scrollback, exitCode } = startInPane(
      `--sim ${JSON.stringify(policy('long-answer'))}`,
      { rows: 12, columns: 100 },
    );
    await waitFor('the prompt', () =>
      screen().includes('/help lists commands') ? true : undefined,
    );
    tmux('send-keys', '-t', session, 'lines 30', 'Enter');
    await waitFor('the end of the turn', () =>
      /session \$[\d.]+\n›/.test(screen()) ? true : undefined,
    );
    // The first lines scrolled off the 12 rows; they are in the scrollback, each once.
    expect(answerLines(scrollback(), 30)).toEqual(every(30));
    // The frame below them is still drawn where the cursor is: typed text shows.
    tmux('send-keys', '-t', session, 'half typed');
    await waitFor('the typed text', () => (/^› half typed/m.test(screen()) ? true : undefined));
    tmux('send-keys', '-t', session, 'C-u', '/exit', 'Enter');
    expect(await exitCode()).toBe('0');
  });

  it('shows what is typed and every answer line when the terminal reports 0 by 0', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const { screen, scrollback, exitCode } = startInPane(
      `--sim ${JSON.stringify(policy('long-answer'))}`,
      { rows: 12, columns: 100, reportsNoSize: true },
    );
    await waitFor('the prompt', () =>
      screen().includes('/help lists commands') ? true : undefined,
    );
    tmux('send-keys', '-t', session, 'hello there');
    await waitFor('the typed text', () => (/^› hello there/m.test(screen()) ? true : undefined));
    tmux('send-keys', '-t', session, 'Enter');
    await waitFor('the answer', () => (screen().includes('echo: hello there') ? true : undefined));
    tmux('send-keys', '-t', session, 'lines 30', 'Enter');
    await waitFor('the last answer line', () =>
      screen().includes('line 29 of 30') ? true : undefined,
    );
    expect(answerLines(scrollback(), 30)).toEqual(every(30));
    tmux('send-keys', '-t', session, '/exit', 'Enter');
    expect(await exitCode()).toBe('0');
  });
});

describe('the CLI when its terminal closes (SIGHUP)', () => {
  /**
   * Waits for the Bash `sleep <seconds>` an agent runs, closes the window (tmux hangs up the
   * terminal: the CLI gets SIGHUP), and expects the sleep and the CLI (`cliArgs`, how its
   * command line starts) to be gone, not left running under init.
   */
  async function closeWhileSleeping(seconds: string, cliArgs: string): Promise<void> {
    await waitFor(
      'the sleeping Bash command',
      () => processesWith(`sleep ${seconds}`).length > 0 || undefined,
    );
    const cli = `${process.execPath} ${CLI_BIN} ${cliArgs}`;
    tmux('kill-session', '-t', session);
    await waitFor(
      'no sleeping child left',
      () => processesWith(`sleep ${seconds}`).length === 0 || undefined,
      10_000,
    ).catch((error: Error) => {
      // Whether the CLI is still there tells a stop that hangs from one that never ran.
      const left = processesWith(cli).length > 0 ? 'still runs' : 'has exited';
      throw new Error(`${error.message} (the CLI ${left})`);
    });
    await waitFor('the CLI to exit', () => processesWith(cli).length === 0 || undefined, 5_000);
  }

  it('stops a `delegate run` with its live view and the shell commands its agents started', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const seconds = `24.${String(process.pid).padStart(5, '0')}`;
    startInPane(
      `run --sim ${JSON.stringify(policy('live'))} --allowed-tools 'Bash(sleep:*)' 'go sleep-for ${seconds}'`,
      { rows: 40 },
    );
    await closeWhileSleeping(seconds, 'run');
  });

  it('stops the interactive session, every agent and the shell commands they started', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const seconds = `25.${String(process.pid).padStart(5, '0')}`;
    const { screen } = startInPane(
      `--sim ${JSON.stringify(policy('live'))} --allowed-tools 'Bash(sleep:*)'`,
      { rows: 40 },
    );
    await waitFor('the prompt', () =>
      screen().includes('/help lists commands') ? true : undefined,
    );
    tmux('send-keys', '-t', session, `go sleep-for ${seconds}`, 'Enter');
    await closeWhileSleeping(seconds, '--sim');
  });
});

describe('the interactive session and approvals', () => {
  it('asks on the prompt line before a call that needs approval, and keeps the conversation after Ctrl-C stops a turn', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const seconds = `28.${String(process.pid).padStart(5, '0')}`;
    const { screen, exitCode } = startInPane(`--sim ${JSON.stringify(policy('interactive'))}`, {
      rows: 40,
    });
    await waitFor('the prompt', () =>
      screen().includes('/help lists commands') ? true : undefined,
    );

    tmux('send-keys', '-t', session, 'run mkdir asked-dir', 'Enter');
    await waitFor('the question', () =>
      screen().includes('Bash(mkdir asked-dir) needs approval. Allow? [y/N]') ? true : undefined,
    );
    expect(existsSync(join(scratch.project, 'asked-dir'))).toBe(false);
    tmux('send-keys', '-t', session, 'y', 'Enter');
    await waitFor('the approved call', () => (screen().includes('OK: ') ? true : undefined));
    expect(existsSync(join(scratch.project, 'asked-dir'))).toBe(true);

    tmux('send-keys', '-t', session, `run sleep ${seconds}`, 'Enter');
    await waitFor('the second question', () =>
      screen().includes(`Bash(sleep ${seconds}) needs approval`) ? true : undefined,
    );
    tmux('send-keys', '-t', session, 'y', 'Enter');
    await waitFor(
      'the sleeping command',
      () => processesWith(`sleep ${seconds}`).length > 0 || undefined,
    );
    tmux('send-keys', '-t', session, 'C-c');
    await waitFor('the stopped turn', () => (screen().includes('interrupted') ? true : undefined));
    await waitFor(
      'no sleeping child left',
      () => processesWith(`sleep ${seconds}`).length === 0 || undefined,
      5_000,
    );

    tmux('send-keys', '-t', session, 'hello again', 'Enter');
    await waitFor('an answer that remembers the earlier turns', () =>
      screen().includes(`seen: run mkdir asked-dir | run sleep ${seconds} | hello again`)
        ? true
        : undefined,
    );
    tmux('send-keys', '-t', session, 'C-d');
    const code = await exitCode();
    expect(code).toBe('0');
  });
});

/** The interactive session on the `background` policy, once its prompt shows. */
async function startBackgroundSession(
  rows: number,
): Promise<{ screen: () => string; exitCode: () => Promise<string>; sessionId: string }> {
  const pane = startInPane(
    `--sim ${JSON.stringify(policy('background'))} --allowed-tools 'Bash(sleep:*)'`,
    { rows },
  );
  await waitFor('the prompt', () =>
    pane.screen().includes('/help lists commands') ? true : undefined,
  );
  return { ...pane, sessionId: /session ([0-9a-f-]{36})/.exec(pane.screen())![1]! };
}

/** Asks for a background agent that runs `sleep <seconds>`, and waits for the sleep. */
async function startSleepingBackgroundAgent(seconds: string): Promise<void> {
  tmux('send-keys', '-t', session, `bg ${seconds}`, 'Enter');
  await waitFor(
    'the sleeping background agent',
    () => processesWith(`sleep ${seconds}`).length > 0 || undefined,
  );
}

/** How the session's stops ended its background agents (`stopped-agents.json`), by agent. */
function stopRecord(sessionId: string): Record<string, string> {
  return JSON.parse(
    readFileSync(
      join(scratch.home, '.delegate', 'transcripts', sessionId, 'stopped-agents.json'),
      'utf8',
    ),
  ) as Record<string, string>;
}

describe('the interactive session and background work', () => {
  it('lists commands and agents, starts a turn on a notification while the person types, and moves and stops agents by id', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const seconds = `27.${String(process.pid).padStart(5, '0')}`;
    const { screen, exitCode } = await startBackgroundSession(50);

    tmux('send-keys', '-t', session, '/help', 'Enter');
    await waitFor('the command list', () =>
      /\/stop <task-id\|agent-id>\s+stop a task/.test(screen()) ? true : undefined,
    );
    tmux('send-keys', '-t', session, '/agents', 'Enter');
    await waitFor('the agent list', () =>
      /Explore\s+built-in\s+haiku/.test(screen()) ? true : undefined,
    );

    // A background agent ends while the person is typing: its notification starts a turn on
    // its own, and the half-typed line stays on the prompt.
    tmux('send-keys', '-t', session, 'bg 1', 'Enter');
    await waitFor('the Agent call to return', () =>
      screen().includes('main agent: the Agent call returned') ? true : undefined,
    );
    tmux('send-keys', '-t', session, 'half typed');
    await waitFor('the turn the notification started', () => {
      const text = screen();
      return text.includes('background general-purpose "bg job" finished') &&
        text.includes('notified: completed')
        ? text
        : undefined;
    });
    expect(screen()).toMatch(/› half typed\s*$/m);
    tmux('send-keys', '-t', session, 'C-u');

    // A foreground agent moved to the background by id, then stopped by id.
    tmux('send-keys', '-t', session, `fg ${seconds}`, 'Enter');
    await waitFor(
      'the sleeping Bash command',
      () => processesWith(`sleep ${seconds}`).length > 0 || undefined,
    );
    tmux('send-keys', '-t', session, '/tasks', 'Enter');
    const agentId = await waitFor(
      'the running task',
      () => /t[0-9a-f]+\s+(a[0-9a-f]+)\s+local_agent\s+running\s+fg job/.exec(screen())?.[1],
    );
    tmux('send-keys', '-t', session, `/bg ${agentId}`, 'Enter');
    await waitFor('the agent in the background', () => {
      const text = screen();
      return text.includes(`Moved ${agentId} to the background.`) &&
        /general-purpose "fg job" \[background\]/.test(text)
        ? true
        : undefined;
    });
    expect(processesWith(`sleep ${seconds}`).length).toBeGreaterThan(0);
    tmux('send-keys', '-t', session, `/stop ${agentId}`, 'Enter');
    await waitFor('the stopped agent', () =>
      screen().includes('background general-purpose "fg job" was stopped') ? true : undefined,
    );
    await waitFor(
      'no sleeping child left',
      () => processesWith(`sleep ${seconds}`).length === 0 || undefined,
      5_000,
    );
    await waitFor('the turn its notification started', () =>
      screen().includes('notified: killed') ? true : undefined,
    );

    tmux('send-keys', '-t', session, '/exit', 'Enter');
    const code = await exitCode();
    expect(code).toBe('0');
  });
  it('delivers, in the session that goes on after Ctrl-C, a notification the stop left undelivered', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const seconds = `26.${String(process.pid).padStart(5, '0')}`;
    const { screen, exitCode } = await startBackgroundSession(50);
    tmux('send-keys', '-t', session, 'bg 0.5', 'Enter');
    await waitFor('the Agent call to return', () =>
      screen().includes('main agent: the Agent call returned') ? true : undefined,
    );
    // The main agent waits on a foreground agent while the background one ends: its
    // notification is queued for the main agent's next request, which Ctrl-C prevents.
    tmux('send-keys', '-t', session, `fg ${seconds}`, 'Enter');
    await waitFor(
      'the sleeping foreground agent',
      () => processesWith(`sleep ${seconds}`).length > 0 || undefined,
    );
    await waitFor('the background agent to end', () =>
      screen().includes('background general-purpose "bg job" finished') ? true : undefined,
    );
    expect(screen()).not.toContain('notified: completed');
    tmux('send-keys', '-t', session, 'C-c');
    await waitFor('the stopped turn', () => (screen().includes('interrupted') ? true : undefined));
    // The person stopped everything: no turn starts on its own after that.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(screen()).not.toContain('notified: completed');
    // The session that goes on read the notification back from the transcript: the person's
    // next prompt carries it.
    tmux('send-keys', '-t', session, 'go on', 'Enter');
    await waitFor('the turn that carried the owed notification', () =>
      screen().includes('notified: completed') ? true : undefined,
    );
    expect(screen().split('notified: completed')).toHaveLength(2);
    tmux('send-keys', '-t', session, '/exit', 'Enter');
    const code = await exitCode();
    expect(code).toBe('0');
  });

  it('tells the main agent, with the next prompt, that Ctrl-C stopped its background agent', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const background = `23.${String(process.pid).padStart(5, '0')}`;
    const foreground = `22.${String(process.pid).padStart(5, '0')}`;
    const { screen, exitCode, sessionId } = await startBackgroundSession(50);
    await startSleepingBackgroundAgent(background);
    // Ctrl-C stops everything while a turn runs: the foreground agent and the background one.
    tmux('send-keys', '-t', session, `fg ${foreground}`, 'Enter');
    await waitFor(
      'the sleeping foreground agent',
      () => processesWith(`sleep ${foreground}`).length > 0 || undefined,
    );
    tmux('send-keys', '-t', session, 'C-c');
    await waitFor('the stopped turn', () => (screen().includes('interrupted') ? true : undefined));
    await waitFor(
      'no sleeping child left',
      () => processesWith(`sleep ${background}`).length === 0 || undefined,
      5_000,
    );
    expect(screen()).not.toContain('notified:');
    tmux('send-keys', '-t', session, 'what now?', 'Enter');
    await waitFor('the turn that carried the notification', () =>
      screen().includes('notified: killed') ? true : undefined,
    );
    // Leaving the session stops a background agent too, and records how for a later --resume.
    await startSleepingBackgroundAgent(background);
    tmux('send-keys', '-t', session, '/exit', 'Enter');
    expect(await exitCode()).toBe('0');
    expect(Object.values(stopRecord(sessionId))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Stopped by Ctrl-C at /),
        expect.stringMatching(/^Stopped: the interactive session ended \(\/exit\) at /),
      ]),
    );
  });

  it('ends on Ctrl-D, stopping a background agent, and records how for a later --resume', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const background = `21.${String(process.pid).padStart(5, '0')}`;
    const { exitCode, sessionId } = await startBackgroundSession(40);
    await startSleepingBackgroundAgent(background);
    tmux('send-keys', '-t', session, 'C-d');
    expect(await exitCode()).toBe('0');
    await waitFor(
      'no sleeping child left',
      () => processesWith(`sleep ${background}`).length === 0 || undefined,
      5_000,
    );
    expect(Object.values(stopRecord(sessionId))).toEqual([
      expect.stringMatching(
        /^Stopped: the interactive session ended \(Ctrl-D\) at \d\d:\d\d:\d\d UTC, before it finished\.$/,
      ),
    ]);
  });
});

describe('one-shot commands in a terminal', () => {
  it('says how to pass the prompt when `delegate run` has none and stdin is the terminal', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const { screen, exitCode } = startInPane('run --sim', { rows: 20 });
    expect(await exitCode()).toBe('2');
    expect(screen().replace(/\n/g, '')).toContain(
      'delegate: The prompt is empty. Pass it as an argument (delegate run "<prompt>"), or pipe it in on stdin (echo "<prompt>" | delegate run, or delegate -p).',
    );
  });

  it('shows the finished agent tree of `delegate demo` once: the live view, not a copy below it', async () => {
    expect(hasTmux(), 'tmux is needed for this test (apt-get install tmux)').toBe(true);
    const { exitCode } = startInPane('demo --fast --no-compare', { rows: 50 });
    expect(await exitCode()).toBe('0');
    // The whole output, scrollback included.
    const output = tmux('capture-pane', '-t', session, '-p', '-S', '-');
    expect(output).toContain('Reports');
    expect(output.match(/✓ main · done in/g)).toHaveLength(1);
    expect(output.match(/fork "survey src\/api" \[fork\] · done/g)).toHaveLength(1);
    expect(output).not.toContain('Agent tree');
  }, 60_000);
});
