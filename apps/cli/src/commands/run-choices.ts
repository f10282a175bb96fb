// Plain lists, so the command line can be described (help, --version) without loading zod
// and @delegate/core; run-flags.test.ts checks they match the schemas.

/** Output formats of `delegate run`. */
export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Permission modes a person may pick on the command line (`bubble` is for forks only). */
export const CLI_PERMISSION_MODES = [
  'default',
  'acceptEdits',
  'bypassPermissions',
  'plan',
  'dontAsk',
] as const;
