import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as ShellParser from './shell-parser.js';

const require = createRequire(import.meta.url);
let scratch: string | undefined;

afterEach(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

// Each test gets its own copy of the module: the parser is loaded once per module instance.
async function freshParserModule(): Promise<typeof ShellParser> {
  vi.resetModules();
  return import('./shell-parser.js');
}

describe('configureShellParser', () => {
  it('loads the parser from the WebAssembly files a bundling host points it at', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'delegate-wasm-'));
    const runtime = join(scratch, 'runtime.wasm');
    const grammar = join(scratch, 'bash.wasm');
    await copyFile(require.resolve('web-tree-sitter/web-tree-sitter.wasm'), runtime);
    await copyFile(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'), grammar);
    const module = await freshParserModule();
    module.configureShellParser({ runtime, grammar });
    await module.loadShellParser();
    expect(module.isShellParserLoaded()).toBe(true);
    expect(module.withShellSyntaxTree('ls | wc -l', (root) => root.type)).toBe('program');
  });

  it('says the parser could not be loaded when a configured file is missing', async () => {
    const module = await freshParserModule();
    module.configureShellParser({ grammar: join(tmpdir(), 'no-such-grammar.wasm') });
    await expect(module.loadShellParser()).rejects.toThrow(
      /bash parser \(tree-sitter-bash\) could not be loaded/,
    );
    expect(module.isShellParserLoaded()).toBe(false);
  });
});
