import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const recorder = fileURLToPath(new URL('./__fixtures__/record-imports.mjs', import.meta.url));
const entry = fileURLToPath(new URL('./index.ts', import.meta.url));

async function packagesLoadedBy(script: string): Promise<string[]> {
  const { stderr } = await run(
    process.execPath,
    ['--import', recorder, '--import', 'tsx', '--input-type=module', '-e', script],
    {
      cwd: repositoryRoot,
      env: { ...process.env, TSX_TSCONFIG_PATH: 'tsconfig.source.json' },
      timeout: 60_000,
    },
  );
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
}

describe('importing @delegate/tools', () => {
  it(
    'loads neither the MCP SDK nor the bash grammar until they are used',
    { timeout: 120_000 },
    async () => {
      const loaded = await packagesLoadedBy(
        `const tools = await import(${JSON.stringify(entry)}); tools.getBuiltinTools();`,
      );
      expect(loaded.some((url) => url.includes('/zod/'))).toBe(true);
      expect(loaded.filter((url) => url.includes('@modelcontextprotocol'))).toEqual([]);
      expect(loaded.filter((url) => url.includes('web-tree-sitter'))).toEqual([]);

      const afterUse = await packagesLoadedBy(
        `const tools = await import(${JSON.stringify(entry)}); await tools.loadShellParser();`,
      );
      expect(afterUse.some((url) => url.includes('web-tree-sitter'))).toBe(true);
    },
  );
});
