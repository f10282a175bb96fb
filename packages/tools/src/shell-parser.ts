import { createRequire } from 'node:module';
import { DelegateError } from '@delegate/core';
import type { Node, Parser, Tree } from 'web-tree-sitter';

/** A syntax node of the bash grammar (tree-sitter-bash). */
export type ShellSyntaxNode = Node;

let parser: Parser | undefined;
let loading: Promise<void> | undefined;
let wasmPaths: ShellParserWasmPaths = {};

/** Where the parser's two WebAssembly files are, for hosts that bundle this package. */
export type ShellParserWasmPaths = {
  /** web-tree-sitter's runtime (`web-tree-sitter.wasm`); default: next to its module. */
  runtime?: string;
  /** The bash grammar (`tree-sitter-bash.wasm`); default: from the tree-sitter-bash package. */
  grammar?: string;
};

/**
 * Tells the bash parser where its WebAssembly files are. Only a host that bundles
 * @delegate/tools needs this (a bundle has no node_modules to find them in): copy
 * `web-tree-sitter/web-tree-sitter.wasm` and `tree-sitter-bash/tree-sitter-bash.wasm` next
 * to the bundle and pass their paths before the first analysis.
 */
export function configureShellParser(paths: ShellParserWasmPaths): void {
  wasmPaths = { ...paths };
}

async function load(): Promise<void> {
  // Imported here, not at the top: the grammar is ~1.4 MB of WebAssembly, and most
  // programs that import @delegate/tools never analyse a shell command.
  const { Parser: ParserClass, Language } = await import('web-tree-sitter');
  const runtime = wasmPaths.runtime;
  await ParserClass.init(runtime ? { locateFile: () => runtime } : undefined);
  const grammarPath =
    wasmPaths.grammar ??
    createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
  const grammar = await Language.load(grammarPath);
  const created = new ParserClass();
  created.setLanguage(grammar);
  parser = created;
}

/**
 * Loads the bash parser (tree-sitter-bash, as WebAssembly) once; later calls return the
 * same promise. The synchronous analysis functions (`analyzeShellCommandSync`,
 * `isReadOnlyCommand`, `assessReadOnlyCommand`, `matchesShellRule`) need it loaded first.
 */
export function loadShellParser(): Promise<void> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw new DelegateError(
      'TOOL_FAILED',
      `The bash parser (tree-sitter-bash) could not be loaded: ${(error as Error).message}. ` +
        'Check that web-tree-sitter and tree-sitter-bash are installed.',
      { cause: error },
    );
  });
  return loading;
}

/** True once `loadShellParser()` has finished. */
export function isShellParserLoaded(): boolean {
  return parser !== undefined;
}

/**
 * Parses a shell line into a bash syntax tree and hands the tree to `use`, freeing it
 * afterwards. Throws a DelegateError when the parser is not loaded yet.
 */
export function withShellSyntaxTree<Result>(
  source: string,
  use: (root: ShellSyntaxNode) => Result,
): Result {
  if (parser === undefined) {
    throw new DelegateError(
      'TOOL_FAILED',
      'The bash parser is not loaded yet. Call `await loadShellParser()` (from @delegate/tools) ' +
        'before analysing shell commands synchronously.',
    );
  }
  const tree: Tree | null = parser.parse(source);
  if (tree === null) {
    throw new DelegateError('TOOL_FAILED', 'The bash parser returned no syntax tree.');
  }
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}
