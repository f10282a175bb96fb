import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createRootToolUseContext } from '@delegate/context-isolation';
import type { ToolUseContext } from '@delegate/core';
import { createGlobTool, createGrepTool, type GrepInput } from '@delegate/tools';
import { type BenchResult, medianTime } from './harness.js';

const run = promisify(execFile);

const directoryCount = 100;
const filesPerDirectory = 100;
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

/** Grep and Glob over a generated 10,000-file tree, side by side with GNU grep and find. */
export default async function toolsBench(): Promise<BenchResult[]> {
  const root = await mkdtemp(join(tmpdir(), 'delegate-tools-bench-'));
  try {
    const fileCount = await createTree(root);
    const context = createContext(root);
    const grepTool = createGrepTool();
    const globTool = createGlobTool();
    const extras = { toolUseId: 'bench' };
    const results: BenchResult[] = [];

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
