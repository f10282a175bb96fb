import { existsSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  realpath,
  rm,
  rmdir,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { extractReadmeBlocks, extractReadmeExamples } from './readme-examples.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// packages/runtime/src/readme.test.ts runs the runtime's examples, with checks of its own.
const RUN_BY_OWN_TEST = new Set(['packages/runtime']);

async function packageFolders(): Promise<string[]> {
  const folders: string[] = [];
  for (const group of ['packages', 'apps']) {
    for (const name of (await readdir(join(root, group))).sort()) {
      const id = `${group}/${name}`;
      if (existsSync(join(root, id, 'README.md'))) folders.push(id);
    }
  }
  return folders;
}

/** Listening servers of this process: an example that leaves one would never exit under tsx. */
function openServers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length;
}

// Each example runs with a scratch project folder as its working directory and a temporary
// HOME, so it reads nothing of the person running the tests and writes nothing into the
// repository. The example file itself goes into the package's (git-ignored) .tmp folder, so
// its imports resolve from that package's dependencies, as they would for someone who
// installed it.
let scratch: string;
let previousCwd: string;
let previousHome: string | undefined;

beforeEach(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'delegate-readme-')));
  await mkdir(join(scratch, 'project'), { recursive: true });
  await mkdir(join(scratch, 'home'), { recursive: true });
  previousCwd = process.cwd();
  previousHome = process.env['HOME'];
  process.env['HOME'] = join(scratch, 'home');
  process.chdir(join(scratch, 'project'));
});

afterEach(async () => {
  process.chdir(previousCwd);
  if (previousHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = previousHome;
  await rm(scratch, { recursive: true, force: true });
});

for (const folder of await packageFolders()) {
  const readme = await readFile(join(root, folder, 'README.md'), 'utf8');

  describe(`${folder}/README.md`, () => {
    it('marks every TypeScript block that can run as written as an example', () => {
      // A block that declares nothing (`declare const …` stands for the reader's own values)
      // runs as it is, so it must be a ```ts example block with what it prints.
      const unmarked = extractReadmeBlocks(readme)
        .filter((block) => !/\bexample\b/.test(block.info) && !/^declare /m.test(block.code))
        .map((block) => `line ${block.line}`);
      expect(unmarked).toEqual([]);
    });

    const examples = RUN_BY_OWN_TEST.has(folder) ? [] : extractReadmeExamples(readme);
    for (const example of examples) {
      it(`the example on line ${example.line} prints exactly what the README says`, async () => {
        expect(example.prints, 'a <!-- prints: … --> comment after the block').toBeDefined();
        const folderOfExamples = join(root, folder, '.tmp', 'readme-examples');
        await mkdir(folderOfExamples, { recursive: true });
        const file = join(folderOfExamples, `line-${example.line}.ts`);
        await writeFile(file, example.code);
        const serversBefore = openServers();
        const lines: string[] = [];
        // Printed as a terminal shows it (util.format, as console.log does), split into lines.
        const spy = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
          lines.push(...format(...values).split('\n'));
        });
        try {
          await import(file);
        } finally {
          spy.mockRestore();
          await rm(folderOfExamples, { recursive: true, force: true });
          // .tmp itself goes too, unless something else keeps files there.
          await rmdir(dirname(folderOfExamples)).catch(() => undefined);
        }
        expect(lines).toEqual(example.prints);
        expect(openServers(), 'servers the example left listening').toBe(serversBefore);
      });
    }
  });
}
