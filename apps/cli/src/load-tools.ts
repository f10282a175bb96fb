import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as Tools from '@delegate/tools';

type ToolsModule = typeof Tools;
let loaded: Promise<ToolsModule> | undefined;

/**
 * Imports @delegate/tools, pointing its bash parser at the WebAssembly files the build copies
 * next to the bundle (a bundle has no node_modules to find them in). Every import of the
 * tools in the CLI goes through here.
 */
export function loadTools(): Promise<ToolsModule> {
  loaded ??= import('@delegate/tools').then((tools) => {
    const runtime = fileURLToPath(new URL('./web-tree-sitter.wasm', import.meta.url));
    const grammar = fileURLToPath(new URL('./tree-sitter-bash.wasm', import.meta.url));
    // Run from source (tests), the files are found in node_modules as usual.
    if (existsSync(runtime) && existsSync(grammar))
      tools.configureShellParser({ runtime, grammar });
    return tools;
  });
  return loaded;
}
