import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearAgentDefinitionsCache, getAgentDefinitionsWithOverrides } from '@delegate/agent-defs';
import { medianTime, type BenchResult } from './harness.js';

const FILE_COUNT = 2_000;
const MODELS = ['inherit', 'sonnet', 'opus', 'haiku'];
const COLORS = ['red', 'blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'cyan'];

function agentText(index: number): string {
  const description = `Use this agent for task family ${index}.\\n\\n<example>\\nContext: the user needs help with area ${index}.\\nuser: "Please handle ${index}"\\nassistant: "I will use agent-${index}."\\n</example>`;
  const tools =
    index % 2 === 0
      ? 'tools: Read, Grep, Glob, Bash(git diff, git status)'
      : 'tools:\n  - Read\n  - Edit\n  - Bash';
  return `---\nname: agent-${index}\ndescription: ${description}\n${tools}\nmodel: ${MODELS[index % MODELS.length]}\ncolor: ${COLORS[index % COLORS.length]}\n---\n\nYou are agent ${index}.\n\n${'Follow the checklist carefully and report what you changed. '.repeat(20)}\n`;
}

/** Loads 2,000 agent files spread over user, project and policy directories, cold and memoized. */
export default async function agentDefsBench(): Promise<BenchResult[]> {
  const root = await mkdtemp(join(tmpdir(), 'agent-defs-bench-'));
  try {
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
    await Promise.all(
      Array.from({ length: FILE_COUNT }, (_, index) =>
        writeFile(
          join(directories[index % directories.length] ?? root, `agent-${index}.md`),
          agentText(index),
        ),
      ),
    );

    const options = { cwd: repo, homeDir: home, policyDir: policy };
    clearAgentDefinitionsCache();
    const check = await getAgentDefinitionsWithOverrides(options);
    const loaded = check.allAgents.filter((agent) => agent.source !== 'built-in').length;
    const problems = check.diagnostics.filter(
      (diagnostic) => diagnostic.severity !== 'info',
    ).length;
    if (loaded !== FILE_COUNT || problems !== 0) {
      throw new Error(
        `expected ${FILE_COUNT} agents and no problems, got ${loaded} and ${problems}`,
      );
    }

    const coldMs = await medianTime(
      async () => {
        clearAgentDefinitionsCache();
        await getAgentDefinitionsWithOverrides(options);
      },
      { runs: 5, warmup: 1 },
    );
    const memoizedMs = await medianTime(() => getAgentDefinitionsWithOverrides(options), {
      runs: 21,
      warmup: 3,
    });
    const coldFilesPerSecond = FILE_COUNT / (coldMs / 1000);
    const memoizedFilesPerSecond = FILE_COUNT / (memoizedMs / 1000);
    const notes = {
      files: FILE_COUNT,
      sources: 'user, project, policy',
      fileBytes: agentText(1).length,
    };
    return [
      {
        name: `agent-defs: load ${FILE_COUNT} files (cold)`,
        metrics: { msPerLoad: coldMs, filesPerSecond: coldFilesPerSecond },
        notes,
      },
      {
        name: `agent-defs: load ${FILE_COUNT} files (memoized)`,
        metrics: { msPerLoad: memoizedMs, filesPerSecond: memoizedFilesPerSecond },
        notes,
      },
      {
        name: 'agent-defs: memoized vs cold',
        metrics: { speedupRatio: memoizedFilesPerSecond / coldFilesPerSecond },
        notes,
      },
    ];
  } finally {
    clearAgentDefinitionsCache();
    await rm(root, { recursive: true, force: true });
  }
}
