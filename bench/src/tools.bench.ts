import { execFile } from 'node:child_process';
import * as fsPromises from 'node:fs/promises';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createRootToolUseContext } from '@delegate/context-isolation';
import type { ToolUseContext } from '@delegate/core';
import {
  analyzeShellCommand,
  analyzeShellCommandSync,
  createGlobTool,
  createGrepTool,
  createReadTool,
  type GrepInput,
} from '@delegate/tools';
import { type BenchResult, medianTime, timeIt } from './harness.js';

const run = promisify(execFile);

// `pnpm bench --quick` runs every scenario at a tiny size (CI checks that it runs, not its figures).
const QUICK = process.argv.includes('--quick');
const directoryCount = QUICK ? 10 : 100;
const filesPerDirectory = QUICK ? 10 : 100;
const literal = 'NEEDLE_TOKEN_42';
const regex = 'function\\s+handle[A-Z]\\w+';

function fileContent(index: number): string {
  const lines: string[] = [
    `// generated file ${index}`,
    `import { helper${index % 17} } from './helper';`,
  ];
  for (let line = 0; line < 40; line++) {
    lines.push(
      `export const value${line} = helper${index % 17}(${line}, 'some text for line ${line}');`,
    );
  }
  if (index % 97 === 0) lines.push(`const marker = '${literal}';`);
  if (index % 19 === 0)
    lines.push(`export function handleRequest${index}(input: string) { return input; }`);
  return `${lines.join('\n')}\n`;
}

async function createTree(root: string): Promise<number> {
  let count = 0;
  for (let directory = 0; directory < directoryCount; directory++) {
    const path = join(root, `module-${directory}`, directory % 2 === 0 ? 'src' : 'lib');
    await mkdir(path, { recursive: true });
    await Promise.all(
      Array.from({ length: filesPerDirectory }, (_, file) => {
        const index = directory * filesPerDirectory + file;
        count++;
        return writeFile(
          join(path, `file-${file}.${file % 4 === 0 ? 'md' : 'ts'}`),
          fileContent(index),
        );
      }),
    );
  }
  return count;
}

function createContext(cwd: string): ToolUseContext {
  return createRootToolUseContext({ cwd, tools: [], model: 'bench' });
}

async function gnuGrep(args: string[]): Promise<string> {
  try {
    const { stdout } = await run('grep', args, { maxBuffer: 256 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    // grep exits 1 when nothing matched.
    if ((error as { code?: number }).code === 1) return '';
    throw error;
  }
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.trimEnd().split('\n').length;
}

type Patchable = Record<string, (...args: unknown[]) => unknown>;

/**
 * Counts the file-system calls (each one a trip through libuv's thread pool) that `work`
 * makes through node:fs/promises and FileHandle methods.
 */
async function countFileSystemCalls(work: () => Promise<void>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const restore: Array<() => void> = [];
  const patch = (target: Patchable, name: string, label: string): void => {
    const original = target[name];
    if (typeof original !== 'function') return;
    target[name] = function (this: unknown, ...args: unknown[]) {
      counts[label] = (counts[label] ?? 0) + 1;
      return original.apply(this, args);
    };
    restore.push(() => {
      target[name] = original;
    });
  };
  const promises = fsPromises as unknown as { default?: Patchable };
  const module = promises.default ?? (fsPromises as unknown as Patchable);
  for (const name of ['realpath', 'lstat', 'stat', 'open', 'readlink', 'readFile', 'readdir']) {
    patch(module, name, name);
  }
  const probe = await fsPromises.open(fileURLToPath(import.meta.url));
  const handlePrototype = Object.getPrototypeOf(probe) as Patchable;
  await probe.close();
  for (const name of ['stat', 'read', 'readFile', 'close']) {
    patch(handlePrototype, name, `handle.${name}`);
  }
  syncBuiltinESMExports();
  try {
    await work();
  } finally {
    for (const undo of restore) undo();
    syncBuiltinESMExports();
  }
  return counts;
}

/** Read of one small file: file-system calls per call (counted) and time per call. */
async function readBench(): Promise<BenchResult> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-read-bench-')));
  try {
    await writeFile(join(root, 'a.ts'), 'export const a = 1;\n'.repeat(200));
    const context = createContext(root);
    const read = createReadTool();
    const extras = { toolUseId: 'bench' };
    const calls = 200;
    await read.call({ file_path: 'a.ts' }, context, extras);
    const counts = await countFileSystemCalls(async () => {
      for (let index = 0; index < calls; index++) {
        await read.call({ file_path: 'a.ts' }, context, extras);
      }
    });
    const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
    const msPerCall =
      (await medianTime(
        async () => {
          for (let index = 0; index < calls; index++) {
            await read.call({ file_path: 'a.ts' }, context, extras);
          }
        },
        { runs: 5, warmup: 1 },
      )) / calls;
    return {
      name: 'tools: Read of a 4 KB file (file-system calls and time per call)',
      metrics: { fileSystemCallsPerRead: total / calls, msPerRead: msPerCall },
      notes: {
        calls,
        breakdown: Object.entries(counts)
          .map(([name, count]) => `${name}×${count / calls}`)
          .join(' '),
        before:
          'the same count on the code before issue 17 gave 10 per Read (realpath×2 stat open readlink handle.stat×3 handle.read×2; close is not counted)',
      },
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Median wall time of a fresh `node` process running `script` (ES module), in ms. */
async function freshProcessMs(script: string, cwd: string): Promise<number> {
  return medianTime(() => run(process.execPath, ['--input-type=module', '-e', script], { cwd }), {
    runs: 7,
    warmup: 1,
  });
}

/** Importing @delegate/tools in a fresh process, side by side with `node -e 0` and with the MCP SDK. */
async function importBench(): Promise<BenchResult> {
  const entry = fileURLToPath(import.meta.resolve('@delegate/tools'));
  const packageFolder = dirname(dirname(entry));
  const baselineMs = await freshProcessMs('0', packageFolder);
  const toolsMs = await freshProcessMs(`await import(${JSON.stringify(entry)});`, packageFolder);
  // What the import used to cost when the MCP SDK was loaded eagerly.
  const withSdkMs = await freshProcessMs(
    `await import(${JSON.stringify(entry)});` +
      `await import('@modelcontextprotocol/sdk/client/index.js');` +
      `await import('@modelcontextprotocol/sdk/client/stdio.js');`,
    packageFolder,
  );
  return {
    name: 'tools: import @delegate/tools in a fresh process (built package)',
    metrics: {
      nodeBaselineMs: baselineMs,
      importToolsMs: toolsMs,
      importToolsOverBaselineMs: toolsMs - baselineMs,
      importToolsWithMcpSdkMs: withSdkMs,
      mcpSdkShareMs: withSdkMs - toolsMs,
    },
    notes: {
      runs: 7,
      meaning:
        'importToolsWithMcpSdkMs is the cost before the MCP SDK became a lazy import (it is now loaded when a server connects)',
    },
  };
}

/** The bash analysis behind Bash permission rules: first use (loads the grammar) and per line. */
async function shellAnalysisBench(): Promise<BenchResult> {
  const line =
    'cd packages/tools && FOO=1 npx vitest run --project tools 2>&1 | tee log.txt | grep -E "fail|pass" || echo $(date) done';
  const firstMs = await timeIt(() => analyzeShellCommand(line));
  const lines = 2000;
  const perLineMs =
    (await medianTime(
      () => {
        for (let index = 0; index < lines; index++) analyzeShellCommandSync(line);
      },
      { runs: 5, warmup: 1 },
    )) / lines;
  return {
    name: 'tools: analyzeShellCommand (bash grammar) of a 120-character line',
    metrics: { firstCallMs: firstMs, msPerLine: perLineMs },
    notes: { lines, firstCall: 'includes loading web-tree-sitter and the bash grammar' },
  };
}

/** Grep and Glob over a generated 10,000-file tree, side by side with GNU grep and find. */
export default async function toolsBench(): Promise<BenchResult[]> {
  const early = [await importBench(), await readBench(), await shellAnalysisBench()];
  const root = await mkdtemp(join(tmpdir(), 'delegate-tools-bench-'));
  try {
    const fileCount = await createTree(root);
    const context = createContext(root);
    const grepTool = createGrepTool();
    const globTool = createGlobTool();
    const extras = { toolUseId: 'bench' };
    const results: BenchResult[] = [...early];

    const cases: Array<{ label: string; input: GrepInput; grepArgs: string[] }> = [
      {
        label: 'literal, files_with_matches',
        input: { pattern: literal, head_limit: 1_000_000 },
        grepArgs: ['-rlF', literal, root],
      },
      {
        label: 'literal, content',
        input: { pattern: literal, output_mode: 'content', head_limit: 1_000_000 },
        grepArgs: ['-rnF', literal, root],
      },
      {
        label: 'regex, files_with_matches',
        input: { pattern: regex, head_limit: 1_000_000 },
        grepArgs: ['-rlE', regex, root],
      },
      {
        label: 'regex, content',
        input: { pattern: regex, output_mode: 'content', head_limit: 1_000_000 },
        grepArgs: ['-rnE', regex, root],
      },
    ];

    for (const benchCase of cases) {
      let ours = 0;
      let theirs = 0;
      const oursMs = await medianTime(
        async () => {
          const result = await grepTool.call(benchCase.input, context, extras);
          ours =
            benchCase.input.output_mode === 'content'
              ? (result.data?.numMatches ?? 0)
              : (result.data?.numFiles ?? 0);
        },
        { runs: 3, warmup: 1 },
      );
      const grepMs = await medianTime(
        async () => {
          theirs = lineCount(await gnuGrep(benchCase.grepArgs));
        },
        { runs: 3, warmup: 1 },
      );
      results.push({
        name: `tools: Grep ${benchCase.label} over ${fileCount} files`,
        metrics: {
          grepToolMs: oursMs,
          gnuGrepMs: grepMs,
          ratioToGnuGrep: oursMs / grepMs,
        },
        notes: {
          files: fileCount,
          resultsGrepTool: ours,
          resultsGnuGrep: theirs,
          pattern: benchCase.input.pattern,
        },
      });
    }

    let globCount = 0;
    let findCount = 0;
    const globMs = await medianTime(
      async () => {
        const result = await globTool.call({ pattern: '**/src/*.ts' }, context, extras);
        globCount = result.data?.numFiles ?? 0;
      },
      { runs: 3, warmup: 1 },
    );
    const findMs = await medianTime(
      async () => {
        const { stdout } = await run('find', [root, '-path', '*/src/*.ts', '-type', 'f'], {
          maxBuffer: 64 * 1024 * 1024,
        });
        findCount = lineCount(stdout);
      },
      { runs: 3, warmup: 1 },
    );
    results.push({
      name: `tools: Glob **/src/*.ts over ${fileCount} files`,
      metrics: { globToolMs: globMs, findMs, ratioToFind: globMs / findMs },
      notes: { files: fileCount, resultsGlobTool: globCount, resultsFind: findCount },
    });
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
