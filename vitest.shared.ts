import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * Shared vitest settings: workspace packages resolve to their TypeScript source,
 * so `pnpm test` needs no prior build.
 */
export const sharedConfig = defineConfig({
  resolve: {
    alias: [
      {
        find: /^@delegate\/([a-z-]+)$/,
        replacement: `${root}packages/$1/src/index.ts`,
      },
      {
        find: /^@delegate\/([a-z-]+)\/internal$/,
        replacement: `${root}packages/$1/src/internal.ts`,
      },
      {
        find: /^@delegate\/([a-z-]+)\/testing$/,
        replacement: `${root}packages/$1/src/testing.ts`,
      },
    ],
  },
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
