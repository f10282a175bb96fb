import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/coverage/**',
      '**/__fixtures__/**',
      'apps/cli/demo-project/**',
      '*.config.ts',
      '*.config.js',
      'vitest.shared.ts',
      '**/vitest.config.ts',
      '**/tsup.config.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@delegate/*/src', '@delegate/*/src/*'],
              message: 'Import a workspace package through its public entry, not its /src.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-console': 'error',
    },
  },
  {
    // The runtime composes everything: keep its functions small enough to read (issue 13).
    files: ['packages/runtime/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      complexity: ['error', 20],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  prettier,
);
