import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
let temp: string;
beforeEach(async () => {
  scratch = await makeScratch();
  // The demo's own temporary folder goes here, so the test can see that it is removed.
  temp = await mkdtemp(join(tmpdir(), 'delegate-demo-test-'));
});
afterEach(async () => {
  await scratch.cleanup();
  await rm(temp, { recursive: true, force: true });
});

type DemoAgent = {
  agentType: string;
  mode: string;
  status: string;
  report?: string;
  description: string;
  usage: { cache_read_input_tokens: number };
};
type DemoRun = {
  exitReason: string;
  answer: string;
  agents: DemoAgent[];
  workers: { costUsd: number; agents: number };
  total: { costUsd: number };
};

describe('delegate demo', () => {
  it('forks three workers, runs a background agent and Plan, and the forks cost less than fresh agents with the context', async () => {
    const result = await runCli(['demo', '--json', '--fast'], {
      cwd: scratch.project,
      home: scratch.home,
      env: { TMPDIR: temp },
      timeoutMs: 90_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const { fork, fresh, workerCostRatio } = JSON.parse(result.stdout) as {
      fork: DemoRun;
      fresh: DemoRun;
      workerCostRatio: number;
    };
    expect(fork.exitReason).toBe('completed');
    const types = fork.agents.map((agent) => `${agent.agentType}/${agent.mode}`).sort();
    expect(types).toEqual([
      'Plan/foreground',
      'fork/fork',
      'fork/fork',
      'fork/fork',
      'general-purpose/background',
      'main/main',
    ]);
    expect(fork.agents.every((agent) => agent.status === 'completed')).toBe(true);
    const forks = fork.agents.filter((agent) => agent.agentType === 'fork');
    // Each worker really listed, searched and read its part of the sample project.
    expect(forks.map((agent) => agent.report?.split('\n')[0]).sort()).toEqual([
      'Scope: src/api, the HTTP layer.',
      'Scope: src/core, the cart, pricing and stock rules.',
      'Scope: src/storage, the SQLite storage.',
    ]);
    expect(forks.find((agent) => agent.description === 'survey src/core')?.report).toContain(
      'src/core/pricing.ts',
    );
    expect(fork.agents.find((agent) => agent.mode === 'background')?.report).toMatch(
      /Found \d+ TODO\/FIXME notes/,
    );
    expect(fork.agents.find((agent) => agent.agentType === 'Plan')?.report).toContain(
      'Critical files:',
    );
    // The background agent's notification reached the main agent before its final answer.
    expect(fork.answer).toContain('The background scan reported: Found');
    expect(fresh.exitReason).toBe('completed');
    expect(fork.workers.agents).toBe(3);
    expect(fresh.workers.agents).toBe(3);
    expect(fork.workers.costUsd).toBeLessThan(fresh.workers.costUsd);
    expect(fork.total.costUsd).toBeLessThan(fresh.total.costUsd);
    expect(workerCostRatio).toBeCloseTo(fork.workers.costUsd / fresh.workers.costUsd, 10);
    for (const agent of forks) expect(agent.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(await readdir(temp)).toEqual([]);
  });

  it('prints the agent tree, the reports and the cache table in text', async () => {
    const result = await runCli(['demo', '--fast'], {
      cwd: scratch.project,
      home: scratch.home,
      env: { TMPDIR: temp },
      timeoutMs: 90_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('a scripted policy stands in for the model');
    expect(result.stdout).toMatch(/fork "survey src\/api" \[fork, completed\]/);
    // The agent tree: the main agent, then each sub-agent under it.
    const tree = result.stdout.slice(
      result.stdout.indexOf('Agent tree'),
      result.stdout.indexOf('Reports'),
    );
    expect(tree).toMatch(/✓ main · done in/);
    expect(tree.match(/^[├└]─ ✓ fork "survey src\/\w+" \[fork\]/gm)).toHaveLength(3);
    expect(tree).toMatch(/[├└]─ ✓ Plan "plan the fixes" \[foreground\]/);
    expect(result.stdout).toMatch(
      /agent\s+mode\s+status\s+cache read\s+cache write\s+uncached\s+output\s+cost/,
    );
    expect(result.stdout).toMatch(/3 workers as forks\s+\S+/);
    expect(result.stdout).toMatch(/Forked workers cost 0\.\d\d× of fresh ones/);
    // Outside a terminal the live tree is one plain line per event, on stderr.
    expect(result.stderr).toMatch(/started fork "survey src\/core" \(fork, /);
    expect(await readdir(temp)).toEqual([]);
  });

  it('stopped by SIGTERM, exits with 143 as the other commands do and removes its folder', async () => {
    const child = spawn(process.execPath, [CLI_BIN, 'demo'], {
      cwd: scratch.project,
      env: { ...process.env, HOME: scratch.home, NO_COLOR: '1', TMPDIR: temp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let sent = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // The paced run has started its first sub-agent: stop it in the middle.
      if (!sent && / started /.test(stderr)) sent = child.kill('SIGTERM');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(143);
    expect(stderr).toContain('terminated');
    expect(await readdir(temp)).toEqual([]);
  }, 60_000);
});
