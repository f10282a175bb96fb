import { copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

const packagesDir = fileURLToPath(new URL('../../packages/', import.meta.url));
// @delegate/tools parses shell lines with WebAssembly files that a bundle cannot inline; they
// are copied next to the bundle and the CLI points the parser at them (src/load-tools.ts).
const fromTools = createRequire(`${packagesDir}tools/package.json`);
const WASM_FILES = {
  'web-tree-sitter.wasm': fromTools.resolve('web-tree-sitter/web-tree-sitter.wasm'),
  'tree-sitter-bash.wasm': fromTools.resolve('tree-sitter-bash/tree-sitter-bash.wasm'),
};
const { version } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as {
  version: string;
};

// The CLI ships as one ESM bundle (plus lazily loaded chunks): start-up time is part of the
// product (`delegate run` should cost little more than `node` itself), and a bundle needs no
// module resolution across hundreds of files. Workspace packages are bundled from their
// source, so building the CLI needs no prior build of the libraries.
export default defineConfig({
  entry: { bin: 'src/bin.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  splitting: true,
  sourcemap: true,
  clean: true,
  dts: false,
  minify: true,
  keepNames: true,
  noExternal: [/.*/],
  define: { __DELEGATE_CLI_VERSION__: JSON.stringify(version) },
  banner: {
    // Bundled CommonJS dependencies call require() for Node built-ins.
    js: "import { createRequire as __delegateCreateRequire } from 'node:module'; const require = __delegateCreateRequire(import.meta.url);",
  },
  onSuccess: async () => {
    for (const [name, source] of Object.entries(WASM_FILES)) {
      copyFileSync(source, fileURLToPath(new URL(`dist/${name}`, import.meta.url)));
    }
  },
  esbuildPlugins: [
    {
      name: 'delegate-workspace-source',
      setup(build) {
        // `@delegate/x` is packages/x/src/index.ts; `@delegate/x/internal` its internal.ts.
        build.onResolve({ filter: /^@delegate\/[a-z-]+(\/internal)?$/ }, (args) => {
          const [name, subpath] = args.path.slice('@delegate/'.length).split('/');
          return { path: `${packagesDir}${name}/src/${subpath ?? 'index'}.ts` };
        });
      },
    },
  ],
});
