import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = join(packageDir, '.tmp', 'readme');

type Example = { code: string; prints: string; index: number };

async function readExamples(): Promise<Example[]> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const pattern = /```ts example\n([\s\S]*?)```\n\s*<!-- prints: (.*?) -->/g;
  return [...readme.matchAll(pattern)].map((match, index) => ({
    code: match[1]!,
    prints: match[2]!,
    index,
  }));
}

afterAll(async () => {
  await rm(join(packageDir, '.tmp'), { recursive: true, force: true });
});

describe('README examples', async () => {
  const examples = await readExamples();

  it('has the three ways to run a sub-agent', () => {
    expect(examples).toHaveLength(3);
  });

  for (const example of examples) {
    it(`example ${example.index + 1} runs and prints what the README says`, async () => {
      await mkdir(scratch, { recursive: true });
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
      expect(lines.join('\n')).toContain(example.prints);
    });
  }
});
