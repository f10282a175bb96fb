import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/internal.ts'],
  format: ['esm'],
  // Workspace packages' types are read from their source, so this package builds (and
  // `pnpm pack` ships dist) without building its dependencies first.
  dts: {
    compilerOptions: {
      rootDir: '../..',
      paths: { '@delegate/*': ['../../packages/*/src/index.ts'] },
    },
  },
  sourcemap: true,
  clean: true,
  // Classes keep their own names: without it esbuild renames DelegateError to _DelegateError,
  // which util.inspect and stack traces then print.
  keepNames: true,
});
