import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/bin.ts'],
  format: ['esm'],
  // Workspace packages' types are read from their source, so this package builds (and
  // `pnpm pack` ships dist) without building its dependencies first.
  dts: {
    entry: 'src/index.ts',
    compilerOptions: {
      rootDir: '../..',
      paths: { '@delegate/*': ['../../packages/*/src/index.ts'] },
    },
  },
  sourcemap: true,
  clean: true,
  // Classes keep their own names in stack traces and util.inspect.
  keepNames: true,
});
