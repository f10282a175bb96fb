import { createRequire } from 'node:module';
import { DelegateError } from '@delegate/core';
import type { Node, Parser, Tree } from 'web-tree-sitter';

/** A syntax node of the bash grammar (tree-sitter-bash). */
export type ShellSyntaxNode = Node;

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

async function load(): Promise<void> {
  // Imported here, not at the top: the grammar is ~1.4 MB of WebAssembly, and most
  // programs that import @delegate/tools never analyse a shell command.
  const { Parser: ParserClass, Language } = await import('web-tree-sitter');
  await ParserClass.init();
  const require = createRequire(import.meta.url);
  const grammar = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
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
