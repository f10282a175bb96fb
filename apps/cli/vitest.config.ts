import { defineProject, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  sharedConfig,
  defineProject({
    test: {
      name: 'cli',
      // Child-process tests run the built bundle; it is built once before them.
      globalSetup: ['./src/__fixtures__/build-cli.ts'],
    },
  }),
);
