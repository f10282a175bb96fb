import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

type Example = { code: string; prints: string[]; index: number };

async function readExamples(): Promise<Example[]> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const pattern = /```ts example\n([\s\S]*?)```\n\s*<!-- prints:\n?([\s\S]*?)-->/g;
  return [...readme.matchAll(pattern)].map((match, index) => ({
    code: match[1]!,
    prints: match[2]!
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean),
    index,
  }));
}

// Each example runs in a scratch folder under the OS temp folder with a temporary HOME, so
// it reads no agents, memory or transcripts of the person running the tests, and writes
// nothing into the repository.
let scratch: string;
let home: string;
let previousCwd: string;
let previousHome: string | undefined;

beforeEach(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'delegate-readme-')));
  home = join(scratch, 'home');
  await mkdir(join(scratch, 'project'), { recursive: true });
  await mkdir(home, { recursive: true });
  previousCwd = process.cwd();
  previousHome = process.env['HOME'];
  process.env['HOME'] = home;
  process.chdir(join(scratch, 'project'));
});

afterEach(async () => {
  process.chdir(previousCwd);
  if (previousHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = previousHome;
  await rm(scratch, { recursive: true, force: true });
});

describe('README examples', async () => {
  const examples = await readExamples();

  it('has the three ways to run a sub-agent, then usage, budgets, notifications (and their resume) and the watchdog', () => {
    expect(examples).toHaveLength(8);
  });

  it('shows both steps of the background example', () => {
    expect(examples[1]?.prints).toEqual([
      'Started the tests in the background.',
      'The tests passed, says the background agent.',
    ]);
  });

  for (const example of examples) {
    it(`example ${example.index + 1} prints exactly what the README says, in order`, async () => {
      const file = join(scratch, `example-${example.index + 1}.ts`);
      await writeFile(file, example.code);
      const lines: string[] = [];
      const spy = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
        lines.push(values.join(' '));
      });
      try {
        await import(file);
      } finally {
        spy.mockRestore();
      }
      expect(lines).toEqual(example.prints);
    });
  }
});
