import { PermissionMode } from '@delegate/core';
import { z } from 'zod';
import { UsageError } from '../exit-codes.js';
import type { ConfigFlags } from '../settings/resolve-config.js';

import { OUTPUT_FORMATS } from './run-choices.js';

export type { OutputFormat } from './run-choices.js';

/** The options of `delegate run` (and `delegate -p`), validated. */
export const RunFlags = z.object({
  model: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  agents: z.string().min(1).optional(),
  permissionMode: PermissionMode.exclude(['bubble']).optional(),
  allowedTools: z.array(z.string()).optional(),
  disallowedTools: z.array(z.string()).optional(),
  maxTurns: z.number().int().positive().optional(),
  cwd: z.string().min(1).optional(),
  addDir: z.array(z.string().min(1)).optional(),
  fork: z.boolean().optional(),
  mcpConfig: z.string().min(1).optional(),
  transcriptDir: z.string().min(1).optional(),
  resume: z.string().min(1).optional(),
  outputFormat: z.enum(OUTPUT_FORMATS).default('text'),
  sim: z.union([z.string().min(1), z.literal(true)]).optional(),
  verbose: z.boolean().optional(),
  trustProject: z.boolean().optional(),
});
export type RunFlags = z.infer<typeof RunFlags>;

/** Validates parsed command-line options; a bad one is a `UsageError` naming the flag. */
export function parseRunFlags(options: Record<string, unknown>): RunFlags {
  const parsed = RunFlags.safeParse(options);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const flag = String(issue?.path[0] ?? 'options').replace(
    /[A-Z]/g,
    (letter) => `-${letter.toLowerCase()}`,
  );
  throw new UsageError(`--${flag}: ${issue?.message ?? 'invalid value'}.`);
}

/** The part of the run flags that settings files can also set. */
export function configFlags(flags: RunFlags): ConfigFlags {
  return {
    model: flags.model,
    permissionMode: flags.permissionMode,
    allowedTools: flags.allowedTools,
    disallowedTools: flags.disallowedTools,
    maxTurns: flags.maxTurns,
    cwd: flags.cwd,
    addDir: flags.addDir,
    fork: flags.fork,
    mcpConfig: flags.mcpConfig,
    transcriptDir: flags.transcriptDir,
    trustProject: flags.trustProject,
  };
}
