import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { clearAgentDefinitionsCache, getAgentDefinitionsWithOverrides } from '@delegate/agent-defs';
import { medianTime, type BenchResult } from './harness.js';

// The loader before issue 12 (the last commit before it), built from git into a temporary
// folder so both are timed side by side in one run.
const PREVIOUS_LOADER_COMMIT = '2b2d99e8bd83ccb5d99e63c10c813df502a8f54a';
// `pnpm bench --quick` runs every scenario at a tiny size (CI checks that it runs, not its figures).
const QUICK = process.argv.includes('--quick');
const FILE_COUNT = QUICK ? 60 : 2_000;
const LARGE_FILE_COUNT = QUICK ? 120 : 10_000;
const PROCESS_RUNS = QUICK ? 1 : 5;
const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODELS = ['inherit', 'sonnet', 'opus', 'haiku'];
const COLORS = ['red', 'blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'cyan'];

function example(index: number, variant: number): string[] {
  return [
    '<example>',
    `Context: The user is working on module ${index}-${variant} and wants a careful second look.`,
    `user: "Please review the changes I made to the ${index} service and tell me what to fix"`,
    `assistant: "I'll use the agent-${index} agent to review the ${variant} changes."`,
    '<commentary>',
    'A focused review was asked for, so the specialist agent is the right choice here.',
    '</commentary>',
    '</example>',
  ];
}

// Three real-world styles: one line with `\n` escapes and `: ` (strict YAML refuses it, as
// in many public collections), a block scalar, and a short quoted description.
function frontmatter(index: number): string {
  const examples = [1, 2, 3].flatMap((variant) => example(index, variant));
  const style = index % 3;
  const description =
    style === 0
      ? `description: Use this agent when the user needs help with area ${index}. Examples:\\n\\n${examples.join('\\n')}`
      : style === 1
        ? `description: |\n  Use this agent when the user needs help with area ${index}.\n\n${examples.map((line) => `  ${line}`).join('\n')}`
        : `description: "Use this agent for area ${index}: reviews, fixes and follow-ups."`;
  const tools =
    index % 2 === 0
      ? 'tools: Read, Grep, Glob, Bash(git diff, git status)'
      : 'tools:\n  - Read\n  - Edit\n  - Bash';
  return `---\nname: agent-${index}\n${description}\n${tools}\nmodel: ${MODELS[index % MODELS.length]}\ncolor: ${COLORS[index % COLORS.length]}\n---\n`;
}

function agentText(index: number): string {
  const paragraph =
    'Follow the checklist carefully, explain each finding with the file and line, and report what you changed and why. ';
  const target = 2_000 + ((index * 997) % 6_000);
  let body = `\n# Agent ${index}\n\nYou are agent ${index}.\n\n`;
  while (body.length < target) body += `## Step ${body.length}\n\n${paragraph.repeat(3)}\n\n`;
  return `${frontmatter(index)}${body}`;
}

type Layout = { root: string; options: { cwd: string; homeDir: string; policyDir: string } };

async function writeAgents(count: number): Promise<Layout> {
  const root = await mkdtemp(join(tmpdir(), 'agent-defs-bench-'));
  const home = join(root, 'home');
  const repo = join(root, 'repo');
  const policy = join(root, 'policy');
  const directories = [
    join(home, '.claude', 'agents'),
    join(repo, '.claude', 'agents', 'team'),
    policy,
  ];
  await mkdir(join(repo, '.git'), { recursive: true });
  for (const directory of directories) await mkdir(directory, { recursive: true });
  for (let start = 0; start < count; start += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - start) }, (_, offset) => {
        const index = start + offset;
        return writeFile(
          join(directories[index % directories.length] ?? root, `agent-${index}.md`),
          agentText(index),
        );
      }),
    );
  }
  return { root, options: { cwd: repo, homeDir: home, policyDir: policy } };
}

// Bundles the previous loader's source (from git) into one file, with its own yaml and zod.
async function buildPreviousLoader(into: string): Promise<string | undefined> {
  try {
    const source = join(into, 'previous');
    await mkdir(source, { recursive: true });
    const archive = execFileSync(
      'git',
      [
        '-C',
        repositoryRoot,
        'archive',
        PREVIOUS_LOADER_COMMIT,
        'packages/agent-defs/src',
        'packages/core/src',
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    execFileSync('tar', ['-x', '-C', source], { input: archive });
    const outfile = join(into, 'previous-agent-defs.mjs');
    await build({
      entryPoints: [join(source, 'packages', 'agent-defs', 'src', 'index.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile,
      alias: { '@delegate/core': join(source, 'packages', 'core', 'src', 'index.ts') },
      nodePaths: [join(repositoryRoot, 'node_modules', '.pnpm', 'node_modules')],
      // yaml is CommonJS and requires Node built-ins; give the ESM bundle a require.
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    return outfile;
  } catch {
    return undefined; // no git history here (a shallow clone or an archive): no ratio
  }
}

const RUNNER = `
const [modulePath, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson);
const started = performance.now();
const loader = await import(modulePath);
const imported = performance.now();
loader.clearAgentDefinitionsCache();
const result = await loader.getAgentDefinitionsWithOverrides(options);
const called = performance.now();
const loaded = result.allAgents.filter((agent) => agent.source !== 'built-in').length;
const problems = result.diagnostics.filter((diagnostic) => diagnostic.severity !== 'info').length;
process.stdout.write(JSON.stringify({ nodeStartMs: started, importMs: imported - started, callMs: called - imported, processMs: performance.now(), loaded, problems }));
`;

type ProcessRun = {
  nodeStartMs: number;
  importMs: number;
  callMs: number;
  processMs: number;
  loaded: number;
  problems: number;
};

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

// Fresh processes, each loading once: the cold figures, medians over the runs.
function timeInFreshProcesses(runner: string, modulePath: string, options: object): ProcessRun {
  const runs: ProcessRun[] = [];
  for (let run = 0; run < PROCESS_RUNS; run++) {
    const child = spawnSync(
      process.execPath,
      [runner, pathToFileURL(modulePath).href, JSON.stringify(options)],
      {
        encoding: 'utf8',
      },
    );
    if (child.status !== 0) throw new Error(`bench child failed: ${child.stderr}`);
    runs.push(JSON.parse(child.stdout) as ProcessRun);
  }
  const pick = (key: keyof ProcessRun): number => median(runs.map((entry) => entry[key]));
  return {
    nodeStartMs: pick('nodeStartMs'),
    importMs: pick('importMs'),
    callMs: pick('callMs'),
    processMs: pick('processMs'),
    loaded: runs[0]?.loaded ?? 0,
    problems: runs[0]?.problems ?? 0,
  };
}

function check(run: ProcessRun, expected: number, label: string): void {
  if (run.loaded !== expected || run.problems !== 0) {
    throw new Error(
      `${label}: expected ${expected} agents and no problems, got ${run.loaded} and ${run.problems}`,
    );
  }
}

/**
 * Loads 2,000 realistic agent files (2-8 KB, long descriptions with examples) over the user,
 * project and policy sources in fresh processes, with the previous loader timed the same way
 * in the same run; then memoized, and 10,000 files cold.
 */
export default async function agentDefsBench(): Promise<BenchResult[]> {
  const work = await mkdtemp(join(tmpdir(), 'agent-defs-bench-build-'));
  const small = await writeAgents(FILE_COUNT);
  const large = await writeAgents(LARGE_FILE_COUNT);
  try {
    const runner = join(work, 'runner.mjs');
    await writeFile(runner, RUNNER);
    const current = join(repositoryRoot, 'packages', 'agent-defs', 'dist', 'index.js');
    const previous = await buildPreviousLoader(work);

    const now = timeInFreshProcesses(runner, current, small.options);
    check(now, FILE_COUNT, 'current loader');
    const before =
      previous === undefined ? undefined : timeInFreshProcesses(runner, previous, small.options);
    const large10k = timeInFreshProcesses(runner, current, large.options);
    check(large10k, LARGE_FILE_COUNT, 'current loader, 10,000 files');

    clearAgentDefinitionsCache();
    await getAgentDefinitionsWithOverrides(small.options);
    const memoizedMs = await medianTime(() => getAgentDefinitionsWithOverrides(small.options), {
      runs: 21,
      warmup: 3,
    });
    clearAgentDefinitionsCache();

    const notes = {
      files: FILE_COUNT,
      sources: 'user, project, policy',
      fileBytes: '2,000-8,000',
      styles:
        'one-line description with \\n and ": " (needs the repair pass), block scalar, quoted',
      processRuns: PROCESS_RUNS,
      previousLoader:
        previous === undefined
          ? 'not built (no git history)'
          : `commit ${PREVIOUS_LOADER_COMMIT.slice(0, 7)}, bundled with esbuild`,
      targets: 'call <= 200 ms, process <= 350 ms, memoized <= 5 ms, 10,000 files <= 1,000 ms',
    };
    const results: BenchResult[] = [
      {
        name: `agent-defs: load ${FILE_COUNT} files, cold in a fresh process`,
        metrics: {
          callMs: now.callMs,
          importMs: now.importMs,
          nodeStartMs: now.nodeStartMs,
          processMs: now.processMs,
          filesPerSecond: FILE_COUNT / (now.callMs / 1000),
        },
        notes,
      },
      {
        name: `agent-defs: load ${FILE_COUNT} files (memoized)`,
        metrics: { msPerLoad: memoizedMs },
        notes,
      },
      {
        name: `agent-defs: load ${LARGE_FILE_COUNT} files, cold in a fresh process`,
        metrics: {
          callMs: large10k.callMs,
          processMs: large10k.processMs,
          filesPerSecond: LARGE_FILE_COUNT / (large10k.callMs / 1000),
        },
        notes: { ...notes, files: LARGE_FILE_COUNT },
      },
    ];
    if (before !== undefined) {
      results.push({
        name: `agent-defs: previous loader, ${FILE_COUNT} files, cold in a fresh process (same run)`,
        metrics: {
          callMs: before.callMs,
          importMs: before.importMs,
          processMs: before.processMs,
          filesPerSecond: FILE_COUNT / (before.callMs / 1000),
          loadedAgents: before.loaded,
        },
        notes,
      });
      results.push({
        name: 'agent-defs: speed-up over the previous loader (same run)',
        metrics: {
          callRatio: before.callMs / now.callMs,
          processRatio: before.processMs / now.processMs,
        },
        notes,
      });
    }
    return results;
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(small.root, { recursive: true, force: true });
    await rm(large.root, { recursive: true, force: true });
  }
}
