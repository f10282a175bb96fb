import { defineProject, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.ts';

// Tests start servers, child processes and a browser: the hang guards are generous so a
// loaded machine is slow, not failing. No test asserts a duration.
export default mergeConfig(
  sharedConfig,
  defineProject({ test: { name: 'server', testTimeout: 120_000, hookTimeout: 120_000 } }),
);
